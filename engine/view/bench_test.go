package view

import (
	"math/rand/v2"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// BenchmarkOverviewView measures the view a page on the native backend asks for every frame at
// 100 brokers × 100,000 partitions: an overview with one partition and one broker in focus, read
// by walking every partition and kept from the events between frames.
func BenchmarkOverviewView(b *testing.B) {
	sc := &engine.Scenario{Name: "bench", Seed: 1, Brokers: 100,
		Topics: []engine.Topic{{Name: "load", Partitions: 100_000, ReplicationFactor: 3}}}
	e, err := engine.New(sc)
	if err != nil {
		b.Fatal(err)
	}
	e.SetTrace(false)
	// 3 simulated seconds of one acks=all batch of 10 records per 10 ms to a random partition
	// (the engine's steadyLoad at its lowest rate).
	rng := rand.New(rand.NewPCG(7, 7))
	n := int32(e.PartitionCount())
	ten, all := int64(10), engine.Acks(-1)
	for t := e.Now() + 10; t <= 3000; t += 10 {
		_ = e.RunUntil(t)
		a := engine.Action{Do: "produce", Topic: "load", Partition: ptr(rng.Int32N(n)), Count: &ten, Acks: &all}
		if err := e.Apply(a); err != nil {
			b.Fatal(err)
		}
		e.Drain()
	}
	opt := Options{Focus: []TP{{Topic: "load", Partition: 17}}, FocusBrokers: []int32{18}, Leaders: true}
	check := func(b *testing.B, v View) {
		if len(v.Partitions) != 1 || len(v.States) != 100_000 {
			b.Fatalf("%d partitions in detail, %d letters", len(v.Partitions), len(v.States))
		}
	}
	// walk: every view reads every partition (Build).
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			check(b, Build(e, opt))
		}
	})
	// kept: a session's view (Overview.Build) after 10 ms more of the same load, the events
	// observed; the advance is not timed.
	b.Run("kept", func(b *testing.B) {
		e.SetTrace(true) // the kept overview hears the events
		var o Overview
		o.Build(e, opt) // the first view walks every partition; the frames after it are timed
		for b.Loop() {
			b.StopTimer()
			_ = e.RunUntil(e.Now() + 10)
			a := engine.Action{Do: "produce", Topic: "load", Partition: ptr(rng.Int32N(n)), Count: &ten, Acks: &all}
			if err := e.Apply(a); err != nil {
				b.Fatal(err)
			}
			o.Observe(e, e.DrainUnnarrated())
			b.StartTimer()
			check(b, o.Build(e, opt))
		}
		b.ReportMetric(float64(o.Walks), "walks")
	})
}
