package engine

// AppendEventJSON (event_json.go, message_json.go) must write what encoding/json writes, byte
// for byte: the trace of `highwater run --trace` is hashed (determinism_test.go) and read by
// tools that were written against encoding/json's output.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// compareEventJSON fails t unless AppendEventJSON and json.Marshal agree on ev.
func compareEventJSON(t *testing.T, ev *Event) {
	t.Helper()
	want, wantErr := json.Marshal(ev)
	got, err := AppendEventJSON([]byte("prefix"), ev)
	if wantErr != nil || err != nil {
		if wantErr == nil || err == nil || wantErr.Error() != err.Error() {
			t.Fatalf("errors differ: encoding/json %v, AppendEventJSON %v", wantErr, err)
		}
		if string(got) != "prefix" {
			t.Fatalf("AppendEventJSON wrote %q with an error", got)
		}
		return
	}
	got, ok := bytes.CutPrefix(got, []byte("prefix"))
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("AppendEventJSON differs from encoding/json:\n  json: %s\n  got:  %s", want, got)
	}
}

// TestEventJSONScenarios compares the two encoders on every event of every preset and of sweep
// seeds from the default mode and the era modes (whose violations carry causes and records).
func TestEventJSONScenarios(t *testing.T) {
	cases := determinismCases(t)
	for _, seed := range []uint64{5, 6, 7, 8} {
		s := newSweepRun(t, seed)
		s.run()
		cases = append(cases, determinismCase{name: fmt.Sprintf("sweep/seed=%d", seed), sc: s.scenario()})
	}
	for _, m := range sweepModes {
		for _, seed := range []uint64{1, 2} {
			s := newSweepRunMode(t, seed, m)
			s.run()
			cases = append(cases, determinismCase{name: fmt.Sprintf("sweep/%s/seed=%d", m.name, seed), sc: s.scenario()})
		}
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			_, _, err := Run(c.sc, func(evs []Event) {
				for i := range evs {
					compareEventJSON(t, &evs[i])
					seen[evs[i].Type] = true
					n++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no events")
			}
		})
	}
	t.Logf("%d of %d event types seen", len(seen), len(EventTypes))
}

// nastyStrings are strings encoding/json escapes: HTML characters, control bytes, U+2028/2029,
// invalid UTF-8 (a lone continuation byte, a truncated sequence, a surrogate), DEL and non-ASCII.
var nastyStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f",
	"line\u2028para\u2029end", "\x80", "ab\xc3", "\xed\xa0\x80", "\x7f", "héllo wörld ✓ 😀",
	"\xff\xfe", "\u00e9\u2027\u202a", "end\\",
}

// TestEventJSONHandMade compares the encoders on events with every field set and nasty strings,
// and on the edge cases of the omit rules: nil versus empty slices, unset Opts, errors.
func TestEventJSONHandMade(t *testing.T) {
	for _, s := range nastyStrings {
		tp := TP{Topic: s, Partition: 3}
		ev := Event{T: 7, Type: s, Broker: Some[int32](0), Topic: s, Partition: Some[int32](-1),
			From: Some[int64](0), To: Some[int64](-5), Epoch: Some[int64](1 << 40), OldISR: []int32{},
			ISR: []int32{1, 2}, Records: []commitlogRecord{}, Reason: s, Name: s, Replicas: []int32{},
			Cause: &Cause{T: 1, Type: s, Text: s}, Text: s,
			Message: &Message{ID: 1 << 63, Type: s, From: -1, To: 2, ReplyTo: 4, Omitted: -3,
				Fetch:                  &FetchRequest{Partitions: []FetchPartition{{TP: tp, MaxRecords: 1}}, ForgottenTopicsData: []TP{tp}},
				FetchResponse:          &FetchResponse{Error: ErrFetchSessionIDNotFound, Partitions: []FetchPartitionData{{TP: tp, Error: ErrFencedLeaderEpoch, DivergingEpoch: &EpochEndOffset{Epoch: 1, EndOffset: 2}, RecordsBefore: 3, Records: []commitlogRecord{{ID: 1, Epoch: 2}, {Gap: true}}}}},
				OffsetsForEpoch:        &OffsetsForEpochRequest{Partitions: []OffsetsForEpochPartition{{TP: tp}}},
				OffsetsForEpochResp:    &OffsetsForEpochResponse{Partitions: []OffsetsForEpochResult{}},
				ListOffsets:            &ListOffsetsRequest{TP: tp},
				ListOffsetsResponse:    &ListOffsetsResponse{TP: tp, Error: ErrNotLeaderOrFollower},
				LeaderAndIsr:           &LeaderAndIsrRequest{Partitions: []LeaderAndIsrState{{TP: tp, ISR: []int32{}}}},
				LeaderAndIsrResponse:   &LeaderAndIsrResponse{},
				StopReplica:            &StopReplicaRequest{Partitions: []TP{}},
				StopReplicaResponse:    &StopReplicaResponse{Error: ErrStaleControllerEpoch},
				UpdateMetadata:         &UpdateMetadataRequest{Partitions: 3, LiveBrokers: []int32{0, 2}},
				UpdateMetadataResponse: &UpdateMetadataResponse{Error: ErrStaleBrokerEpoch},
				AlterPartition:         &AlterPartitionRequest{TP: tp},
				AlterPartitionResponse: &AlterPartitionResponse{TP: tp, Error: ErrInvalidUpdateVersion},
				ControlledShutdown:     &ControlledShutdownRequest{},
				ControlledShutdownResp: &ControlledShutdownResponse{},
				Produce:                &ProduceRequest{Acks: -1, RecordIDs: []int64{}},
				ProduceResponse:        &ProduceResponse{Error: ErrNotEnoughReplicas},
			}}
		compareEventJSON(t, &ev)
		compareEventJSON(t, &Event{Text: s})
		compareEventJSON(t, &Event{Message: &Message{LeaderAndIsrResponse: &LeaderAndIsrResponse{Partitions: []PartitionError{{TP: tp}}}}})
		compareEventJSON(t, &Event{Message: &Message{StopReplicaResponse: &StopReplicaResponse{Partitions: []PartitionError{{TP: tp}}}}})
		compareEventJSON(t, &Event{Message: &Message{UpdateMetadata: &UpdateMetadataRequest{}, UpdateMetadataResponse: &UpdateMetadataResponse{}}})
	}
	for _, acks := range []Acks{-1, 0, 1, 5, -7} {
		compareEventJSON(t, &Event{Message: &Message{Produce: &ProduceRequest{Acks: acks}}})
	}
	compareEventJSON(t, &Event{Message: &Message{Produce: &ProduceRequest{Acks: -1, Idempotent: true}}})
	compareEventJSON(t, &Event{Message: &Message{Produce: &ProduceRequest{Acks: 1, Idempotent: true, Retried: true}}})
	// A code without a name: encoding/json refuses it, and so must the appender, with its error.
	compareEventJSON(t, &Event{Message: &Message{ProduceResponse: &ProduceResponse{Error: 9999}}})
}

// TestEventJSONRandom fills every exported field of events with random values (nil or empty
// slices and pointers, unset Opts, nasty strings) and compares the encoders.
func TestEventJSONRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var ev Event
		fillRandom(rng, reflect.ValueOf(&ev).Elem(), 0)
		compareEventJSON(t, &ev)
	}
}

// FuzzEventJSON compares the encoders on fuzzed strings in every string field and a fuzzed seed
// for the rest. Without -fuzz it runs the seed corpus.
func FuzzEventJSON(f *testing.F) {
	for i, s := range nastyStrings {
		f.Add(s, uint64(i))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var ev Event
		fillRandom(rng, reflect.ValueOf(&ev).Elem(), 0)
		setStrings(reflect.ValueOf(&ev).Elem(), s)
		compareEventJSON(t, &ev)
	})
}

// fillRandom sets v's exported fields at random; depth bounds the nesting.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if depth < 6 && rng.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(rng, v.Elem(), depth+1)
		}
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rng.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fillRandom(rng, v.Index(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString(nastyStrings[rng.IntN(len(nastyStrings))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		if v.Type() == reflect.TypeFor[KafkaError]() {
			codes := []KafkaError{ErrNone, ErrNone, ErrNotLeaderOrFollower, ErrDeliveryTimeout, ErrFencedLeaderEpoch}
			v.SetInt(int64(codes[rng.IntN(len(codes))]))
			return
		}
		vals := []int64{0, 0, 1, -1, 42, 1<<31 - 1, -1 << 31, 1 << 62}
		x := vals[rng.IntN(len(vals))]
		if v.OverflowInt(x) {
			x = int64(rng.IntN(100)) - 50
		}
		v.SetInt(x)
	case reflect.Uint64:
		v.SetUint([]uint64{0, 1, 1 << 63, ^uint64(0)}[rng.IntN(4)])
	default:
		panic("fillRandom: no rule for " + v.Type().String())
	}
}

// setStrings sets every string reachable from v to s.
func setStrings(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setStrings(v.Field(i), s)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			setStrings(v.Elem(), s)
		}
	case reflect.Slice:
		for i := range v.Len() {
			setStrings(v.Index(i), s)
		}
	case reflect.String:
		v.SetString(s)
	}
}

// eventJSONFields lists every exported field AppendEventJSON writes, as Type.Field for each
// struct type reachable from Event. When a struct gains a field, TestEventJSONKnowsEveryField
// fails until the appender writes it and it is listed here.
var eventJSONFields = strings.Fields(`
	Event.T Event.Type Event.Broker Event.Topic Event.Partition Event.Message Event.From Event.To
	Event.Epoch Event.OldISR Event.ISR Event.Records Event.Reason Event.Name Event.Replicas
	Event.Cause Event.Text
	Opt[int32].V Opt[int32].Set Opt[int64].V Opt[int64].Set
	Cause.T Cause.Type Cause.Broker Cause.Text
	Record.ID Record.Epoch Record.Cont Record.Gap
	Message.ID Message.Type Message.From Message.To Message.Sent Message.Deliver Message.ReplyTo
	Message.Omitted Message.Fetch Message.FetchResponse Message.OffsetsForEpoch
	Message.OffsetsForEpochResp Message.ListOffsets Message.ListOffsetsResponse
	Message.LeaderAndIsr Message.LeaderAndIsrResponse Message.StopReplica
	Message.StopReplicaResponse Message.UpdateMetadata Message.UpdateMetadataResponse Message.AlterPartition
	Message.AlterPartitionResponse Message.ControlledShutdown Message.ControlledShutdownResp
	Message.Produce Message.ProduceResponse
	TP.Topic TP.Partition
	FetchRequest.ReplicaID FetchRequest.BrokerEpoch FetchRequest.MaxWaitMs FetchRequest.MinBytes
	FetchRequest.FetcherID FetchRequest.SessionID FetchRequest.SessionEpoch
	FetchRequest.Partitions FetchRequest.ForgottenTopicsData
	FetchPartition.TP FetchPartition.FetchOffset FetchPartition.LogStartOffset
	FetchPartition.CurrentLeaderEpoch FetchPartition.LastFetchedEpoch FetchPartition.MaxRecords
	FetchResponse.Error FetchResponse.SessionID FetchResponse.Partitions
	FetchPartitionData.TP FetchPartitionData.Error FetchPartitionData.HighWatermark
	FetchPartitionData.LogStartOffset FetchPartitionData.LogEndOffset
	FetchPartitionData.DivergingEpoch FetchPartitionData.RecordsBefore FetchPartitionData.Records
	EpochEndOffset.Epoch EpochEndOffset.EndOffset
	OffsetsForEpochRequest.ReplicaID OffsetsForEpochRequest.Partitions
	OffsetsForEpochPartition.TP OffsetsForEpochPartition.CurrentLeaderEpoch
	OffsetsForEpochPartition.LeaderEpoch
	OffsetsForEpochResponse.Partitions
	OffsetsForEpochResult.TP OffsetsForEpochResult.Error OffsetsForEpochResult.LeaderEpoch
	OffsetsForEpochResult.EndOffset
	ListOffsetsRequest.ReplicaID ListOffsetsRequest.TP ListOffsetsRequest.CurrentLeaderEpoch
	ListOffsetsResponse.TP ListOffsetsResponse.Error ListOffsetsResponse.LogEndOffset
	ListOffsetsResponse.LogStartOffset
	LeaderAndIsrRequest.ControllerID LeaderAndIsrRequest.ControllerEpoch
	LeaderAndIsrRequest.BrokerEpoch LeaderAndIsrRequest.Partitions LeaderAndIsrRequest.LiveLeaders
	LeaderAndIsrState.TP LeaderAndIsrState.Leader LeaderAndIsrState.LeaderEpoch
	LeaderAndIsrState.ISR LeaderAndIsrState.PartitionEpoch LeaderAndIsrState.Replicas
	LeaderAndIsrResponse.Error LeaderAndIsrResponse.Partitions
	PartitionError.TP PartitionError.Error
	StopReplicaRequest.ControllerID StopReplicaRequest.ControllerEpoch
	StopReplicaRequest.BrokerEpoch StopReplicaRequest.Partitions
	StopReplicaResponse.Error StopReplicaResponse.Partitions
	UpdateMetadataRequest.ControllerID UpdateMetadataRequest.ControllerEpoch
	UpdateMetadataRequest.BrokerEpoch UpdateMetadataRequest.Partitions UpdateMetadataRequest.LiveBrokers
	UpdateMetadataResponse.Error
	AlterPartitionRequest.BrokerID AlterPartitionRequest.BrokerEpoch AlterPartitionRequest.TP
	AlterPartitionRequest.LeaderEpoch AlterPartitionRequest.PartitionEpoch
	AlterPartitionRequest.NewISR
	AlterPartitionResponse.TP AlterPartitionResponse.Error AlterPartitionResponse.Leader
	AlterPartitionResponse.LeaderEpoch AlterPartitionResponse.ISR
	AlterPartitionResponse.PartitionEpoch
	ControlledShutdownRequest.BrokerID ControlledShutdownRequest.BrokerEpoch
	ControlledShutdownResponse.Error ControlledShutdownResponse.Remaining
	ProduceRequest.Op ProduceRequest.TP ProduceRequest.Acks ProduceRequest.RecordIDs
	ProduceRequest.TimeoutMs ProduceRequest.Idempotent ProduceRequest.Retried
	ProduceResponse.Op ProduceResponse.TP ProduceResponse.Error ProduceResponse.BaseOffset
`)

// TestEventJSONKnowsEveryField walks the struct types reachable from Event and requires their
// exported fields to be exactly eventJSONFields, and the JSON tags to be the ones the appender
// writes (a renamed tag shows up in the other tests as a diff).
func TestEventJSONKnowsEveryField(t *testing.T) {
	var found []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		name := ty.Name()
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			found = append(found, name+"."+f.Name)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Event]())
	slices.Sort(found)
	want := slices.Clone(eventJSONFields)
	slices.Sort(want)
	for _, f := range found {
		if !slices.Contains(want, f) {
			t.Errorf("field %s is not written by AppendEventJSON (event_json.go, message_json.go): add it there and to eventJSONFields", f)
		}
	}
	for _, f := range want {
		if !slices.Contains(found, f) {
			t.Errorf("eventJSONFields lists %s, which no longer exists", f)
		}
	}
}

// TestEventJSONAllocs: the appender allocates nothing once its buffer is large enough.
func TestEventJSONAllocs(t *testing.T) {
	ev := Event{T: 1, Type: MsgFetchResponse, Topic: "t<", Text: "x\u2028y",
		Message: &Message{ID: 9, FetchResponse: &FetchResponse{Partitions: []FetchPartitionData{
			{TP: TP{Topic: "t"}, Error: ErrFencedLeaderEpoch, Records: []commitlogRecord{{ID: 1}}}}}}}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendEventJSON(buf[:0], &ev) }); n != 0 {
		t.Fatalf("AppendEventJSON allocates %v times per event", n)
	}
}
