package engine

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// AppendEventJSON appends ev to dst exactly as json.Marshal writes it (the bytes a
// json.Encoder writes, but the newline): the struct tags' field order and omitempty/omitzero
// rules, and encoding/json's HTML-safe string escaping. It is the trace writer's encoder: a run at
// scale writes millions of events, and encoding/json's reflection cost a third of such a run. It
// allocates nothing beyond dst's growth.
//
// The only error is encoding/json's own, for a value it refuses (a Kafka error code without a
// name); dst then comes back unchanged. event_json_test.go keeps the two encoders equal on every
// preset, sweep seeds and random events, and fails when a struct gains a field this file does not
// write: a new field needs a line here.
func AppendEventJSON(dst []byte, ev *Event) ([]byte, error) {
	w := jsonOut{b: dst}
	w.event(ev)
	if w.bad {
		// encoding/json's message is the one to report, so let it say what it refuses.
		_, err := json.Marshal(ev)
		if err == nil {
			err = errors.New("engine: AppendEventJSON refused an event encoding/json accepts")
		}
		return dst, err
	}
	return w.b, nil
}

// jsonOut is the buffer the appender writes to.
type jsonOut struct {
	b []byte
	// bad is set by a value encoding/json would refuse (a Kafka error code without a name).
	bad bool
}

// key starts a field: a comma unless it is the object's first, then k, which is the quoted name
// and colon (`"t":`).
func (w *jsonOut) key(k string) {
	if w.b[len(w.b)-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, k...)
}

func (w *jsonOut) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

func (w *jsonOut) uint(v uint64) { w.b = strconv.AppendUint(w.b, v, 10) }

// opt writes an Opt field unless unset (omitzero through Opt.IsZero); a set Opt is its number
// (Opt.MarshalJSON).
func optField[T ~int32 | ~int64](w *jsonOut, k string, o Opt[T]) {
	if o.Set {
		w.key(k)
		w.int(int64(o.V))
	}
}

// strOmitEmpty writes a string field unless it is empty (omitempty).
func (w *jsonOut) strOmitEmpty(k, s string) {
	if s != "" {
		w.key(k)
		w.str(s)
	}
}

// ids writes a slice of ids as a JSON array, nil as null (no omit option).
func (w *jsonOut) ids(s []int32) { arrayOf(w, s, (*jsonOut).id) }

func (w *jsonOut) id(v *int32) { w.int(int64(*v)) }

// int64s is ids for int64 elements.
func (w *jsonOut) int64s(s []int64) { arrayOf(w, s, (*jsonOut).int64At) }

func (w *jsonOut) int64At(v *int64) { w.int(*v) }

// records writes log records, nil as null.
func (w *jsonOut) records(s []commitlog.Record) { arrayOf(w, s, (*jsonOut).record) }

func (w *jsonOut) record(r *commitlog.Record) {
	w.b = append(w.b, `{"id":`...)
	w.int(r.ID)
	w.b = append(w.b, `,"epoch":`...)
	w.int(int64(r.Epoch))
	if r.Cont {
		w.b = append(w.b, `,"cont":true`...)
	}
	if r.Gap {
		w.b = append(w.b, `,"gap":true`...)
	}
	w.b = append(w.b, '}')
}

// kafkaError writes an `error` field (omitempty: ErrNone is left out) as the error's name
// (KafkaError.MarshalText); a code without a name marks the output bad.
func (w *jsonOut) kafkaError(e protocol.KafkaError) {
	if e == 0 {
		return
	}
	name, ok := e.Name()
	if !ok {
		w.bad = true
		return
	}
	w.key(`"error":`)
	w.str(name)
}

func (w *jsonOut) event(ev *Event) {
	w.b = append(w.b, `{"t":`...)
	w.int(ev.T)
	w.b = append(w.b, `,"type":`...)
	w.str(ev.Type)
	optField(w, `"broker":`, ev.Broker)
	w.strOmitEmpty(`"topic":`, ev.Topic)
	optField(w, `"partition":`, ev.Partition)
	if ev.Message != nil {
		w.key(`"message":`)
		w.message(ev.Message)
	}
	optField(w, `"from":`, ev.From)
	optField(w, `"to":`, ev.To)
	optField(w, `"epoch":`, ev.Epoch)
	// omitzero leaves out a nil slice but writes an empty one.
	if ev.OldISR != nil {
		w.key(`"oldIsr":`)
		w.ids(ev.OldISR)
	}
	if ev.ISR != nil {
		w.key(`"isr":`)
		w.ids(ev.ISR)
	}
	if ev.Records != nil {
		w.key(`"records":`)
		w.records(ev.Records)
	}
	w.strOmitEmpty(`"reason":`, ev.Reason)
	w.strOmitEmpty(`"name":`, ev.Name)
	if ev.Replicas != nil {
		w.key(`"replicas":`)
		w.ids(ev.Replicas)
	}
	if c := ev.Cause; c != nil {
		w.key(`"cause":`)
		w.b = append(w.b, `{"t":`...)
		w.int(c.T)
		w.b = append(w.b, `,"type":`...)
		w.str(c.Type)
		optField(w, `"broker":`, c.Broker)
		w.b = append(w.b, `,"text":`...)
		w.str(c.Text)
		w.b = append(w.b, '}')
	}
	w.key(`"text":`)
	w.str(ev.Text)
	w.b = append(w.b, '}')
}

// hexDigits are encoding/json's (lower case).
const hexDigits = "0123456789abcdef"

// str writes s as a JSON string the way encoding/json does with HTML escaping on (json.Marshal's
// and json.Encoder's default): `<`, `>` and `&` as \u003c \u003e \u0026; \b \f \n \r \t by name
// and other control bytes as \u00XX; U+2028 and U+2029 escaped; each byte of invalid UTF-8 as
// \ufffd.
func (w *jsonOut) str(s string) {
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

// jsonSafe marks the ASCII bytes a string holds unescaped: printable ASCII and DEL, but for `"`,
// `\` and the HTML-sensitive `<`, `>`, `&` (encoding/json's htmlSafeSet).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		switch c {
		case '"', '\\', '<', '>', '&':
		default:
			t[c] = true
		}
	}
	return t
}()
