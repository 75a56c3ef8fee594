package main

import (
	"bufio"
	"os"

	"github.com/highwater-sim/highwater/engine"
)

const (
	// traceGroupEvents is how many events the sink gathers before it hands them to the writer:
	// a run drains after every step, and handing over each small batch alone would cost a
	// goroutine wake-up per step.
	traceGroupEvents = 8192
	// traceQueue is how many groups may wait for the writer. The bound keeps memory bounded when
	// the disk is slower than the engine: the engine then waits in the sink.
	traceQueue = 4
	// traceReuse is how many written batches may wait to be handed back to the engine
	// (engine.ReuseEvents), and traceReuseCap the largest batch handed back: a run's first
	// batch, its cluster's start, holds three events per replica and would be kept alive for
	// batches of a step's dozen.
	traceReuse    = 4096
	traceReuseCap = 4096
)

// traceWriter writes `highwater run --trace`: one JSON object per event and line, the bytes
// json.Encoder wrote (engine.AppendEventJSON). It narrates and encodes on its own goroutine,
// so the engine, which is single-threaded, simulates on while earlier events are written: on the
// 100-broker load, narration, encoding and writing took a third of the run.
//
// The batches come from engine.RunUnnarrated, which keeps no reference to a batch it hands
// over; the messages the events point to never change once sent (engine/protocol), so reading
// them here while the engine runs is safe.
type traceWriter struct {
	// group gathers the engine's batches (the sink's side only) until it holds
	// traceGroupEvents events.
	group  [][]engine.Event
	events int
	groups chan [][]engine.Event
	done   chan struct{}
	// written carries batches back from the writer, cleared, for reuse: to reuse, on the
	// engine's goroutine (the sink).
	written chan []engine.Event
	reuse   func([]engine.Event)
	f       *os.File
	w       *bufio.Writer
	// err is the first encode or write error; the writer goroutine owns it until done closes.
	err error
}

// newTraceWriter starts the writer goroutine on f; close ends it. reuse (engine.ReuseEvents, or
// nil) takes back the batches written.
func newTraceWriter(f *os.File, reuse func([]engine.Event)) *traceWriter {
	t := &traceWriter{groups: make(chan [][]engine.Event, traceQueue), done: make(chan struct{}),
		written: make(chan []engine.Event, traceReuse), reuse: reuse,
		f: f, w: bufio.NewWriterSize(f, 1<<16)}
	go t.loop()
	return t
}

// sink is the run's event sink. It hands the engine a written batch back, if one is waiting.
func (t *traceWriter) sink(evs []engine.Event) {
	if t.reuse != nil {
		select {
		case buf := <-t.written:
			t.reuse(buf)
		default:
		}
	}
	t.group = append(t.group, evs)
	t.events += len(evs)
	if t.events >= traceGroupEvents {
		t.groups <- t.group
		t.group, t.events = nil, 0
	}
}

func (t *traceWriter) loop() {
	defer close(t.done)
	for group := range t.groups {
		for _, evs := range group {
			t.write(evs)
			if cap(evs) > traceReuseCap {
				continue
			}
			// Cleared here, off the engine's goroutine: a reused batch keeps nothing alive,
			// and every element past its length is zero (ReuseEvents' terms).
			clear(evs)
			select {
			case t.written <- evs:
			default:
			}
		}
	}
}

// write narrates and writes one batch. As with json.Encoder before: an event that cannot be
// encoded is left out and the rest written, after a failed write the bufio.Writer writes nothing
// more, and the first error is kept.
func (t *traceWriter) write(evs []engine.Event) {
	engine.Narrate(evs)
	for i := range evs {
		// Encoded straight into the bufio.Writer's free space, Write copies nothing unless
		// the line did not fit.
		line, err := engine.AppendEventJSON(t.w.AvailableBuffer(), &evs[i])
		if err == nil {
			_, err = t.w.Write(append(line, '\n'))
		}
		if err != nil && t.err == nil {
			t.err = err
		}
	}
}

// close hands over the last group, waits until everything is written, flushes and closes the
// file, and returns the first error of the encoding, the writes, the flush and the close.
func (t *traceWriter) close() error {
	if len(t.group) > 0 {
		t.groups <- t.group
		t.group = nil
	}
	close(t.groups)
	<-t.done
	err := t.err
	if ferr := t.w.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if cerr := t.f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
