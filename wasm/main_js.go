//go:build js && wasm

package main

import (
	"fmt"

	"github.com/hack-pad/safejs"

	"github.com/highwater-sim/highwater/wasm/memgrow"
)

// main registers globalThis.highwater = {handle, version}, tells the page it is ready through
// globalThis.onHighwaterReady(info), then blocks: the exported function is called from JS. A
// large cluster's load grows the memory in one step (memgrow.ForPartitions); the three-broker
// demos grow nothing.
func main() {
	b := NewBridge()
	b.grow = memgrow.ForPartitions
	if err := register(b); err != nil {
		reportFatal(err)
	}
	select {}
}

func register(b *Bridge) error {
	handle, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 1 {
			return errorReply(0, fmt.Sprintf("highwater.handle: want 1 argument (a JSON request string), got %d", len(args)))
		}
		req, err := args[0].String()
		if err != nil {
			return errorReply(0, "highwater.handle: the argument must be a string: "+err.Error())
		}
		return b.Handle(req)
	})
	if err != nil {
		return err
	}
	global := safejs.Global()
	object, err := global.Get("Object")
	if err != nil {
		return err
	}
	ns, err := object.New()
	if err != nil {
		return err
	}
	if err := ns.Set("handle", handle.Value()); err != nil {
		return err
	}
	if err := ns.Set("version", Version); err != nil {
		return err
	}
	if err := global.Set(Namespace, ns); err != nil {
		return err
	}
	return signalReady(global)
}

// signalReady calls onHighwaterReady({version, hasDocument}). In a worker there is no document.
func signalReady(global safejs.Value) error {
	doc, err := global.Get("document")
	if err != nil {
		return err
	}
	info, err := safejs.ValueOf(map[string]any{"version": Version, "hasDocument": !doc.IsUndefined()})
	if err != nil {
		return err
	}
	ready, err := global.Get("onHighwaterReady")
	if err != nil {
		return err
	}
	if ready.Type() != safejs.TypeFunction {
		return fmt.Errorf("onHighwaterReady is not a function (define it before go.run)")
	}
	_, err = ready.Invoke(info)
	return err
}

// reportFatal tells the host the engine could not start, through onHighwaterError if it exists.
func reportFatal(err error) {
	if fn, e := safejs.Global().Get("onHighwaterError"); e == nil && fn.Type() == safejs.TypeFunction {
		_, _ = fn.Invoke(err.Error())
	}
}
