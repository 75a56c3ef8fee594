package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEnginePurity keeps engine/ a pure, deterministic state machine: no goroutines, channels,
// select, clocks, I/O, locks, logging or global randomness (style.md rule 1).
func TestEnginePurity(t *testing.T) {
	forbidden := map[string]string{
		"time": "a wall clock", "os": "I/O", "io/ioutil": "I/O", "net": "I/O", "net/http": "I/O",
		"sync": "locks (the engine is single-threaded)", "sync/atomic": "locks", "math/rand": "global randomness",
		"crypto/rand": "randomness outside the seeded PRNG", "syscall": "I/O", "syscall/js": "JS (belongs in wasm/)",
		"log": "logging (events are the engine's output)", "log/slog": "logging", "unsafe": "unsafe",
	}
	files := 0
	dirs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		files++
		dirs[filepath.Dir(path)] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbidden[p]; bad {
				t.Errorf("%s imports %q: %s has no place in the engine", path, p, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement; the engine is single-threaded", path)
			case *ast.SelectStmt:
				t.Errorf("%s: a select statement; the engine is single-threaded", path)
			case *ast.ChanType:
				t.Errorf("%s: a channel type; the engine is single-threaded", path)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("checked only %d files; is the walk broken?", files)
	}
	for dir := range enginePackages {
		if !dirs[dir] {
			t.Errorf("the walk did not reach engine package %q", dir)
		}
	}
}

// enginePackages are the engine's packages (directories under engine/) and the module's
// packages each may import. Node packages import only the wire (protocol) and the log
// (commitlog): the engine imports them, never the reverse, and nodes talk through protocol types.
// plural, the narration's counted nouns, imports nothing and any package may use it.
var enginePackages = map[string][]string{
	".":          {"protocol", "commitlog", "netsim", "clients", "check", "controller", "broker", "plural"},
	"protocol":   {"commitlog"},
	"commitlog":  {},
	"plural":     {},
	"clients":    {"protocol", "commitlog"},
	"netsim":     {"protocol"},
	"check":      {"protocol", "commitlog", "clients", "plural"},
	"controller": {"protocol", "plural"},
	"broker":     {"protocol", "commitlog", "plural"},
	"view":       {"engine", "protocol", "commitlog", "plural"},
	"session":    {"engine", "view", "protocol", "commitlog"},
}

// TestImportsOneWay: every engine package imports only the engine packages it may
// (enginePackages), so imports go one way and a node's package cannot reach the engine.
func TestImportsOneWay(t *testing.T) {
	const module = "github.com/highwater-sim/highwater/"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir := filepath.Dir(path)
		allowed, known := enginePackages[dir]
		if !known {
			t.Errorf("%s: package %q is not in enginePackages; say what it may import", path, dir)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			name := strings.TrimPrefix(strings.TrimPrefix(p, module), "engine/")
			ok := false
			for _, a := range allowed {
				ok = ok || a == name
			}
			if !ok {
				t.Errorf("%s imports %s: package %q may import only %v", path, p, dir, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckerObserves: protocol code states facts (observe.go) and never checks an invariant or
// counts a tally itself. The checker's and the tallies' methods and memory are reached only from
// their own files (and read by the read API, read.go).
func TestCheckerObserves(t *testing.T) {
	// The checker (package check) is reached only from checker.go, which hands it the facts.
	owner := map[string]string{
		"checker": "checker.go", "HWMoved": "checker.go", "HWConfirmed": "checker.go", "LogCut": "checker.go",
		"PartitionWritten": "checker.go", "Elected": "checker.go", "Truncated": "checker.go", "LeaderChanged": "checker.go",
		"isrShrinks": "tallies.go", "isrExpands": "tallies.go", "leaderChanges": "tallies.go", "flows": "tallies.go",
	}
	readers := map[string]bool{"read.go": true, "run.go": true}
	for path, f := range engineSources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			own, ok := owner[sel.Sel.Name]
			if ok && own == "checker.go" && sel.Sel.Name == "checker" && path == "engine.go" {
				ok = false // engine.go builds the checker and hands it to the observers
			}
			if ok && own != path && !(readers[path] && own == "tallies.go") {
				t.Errorf("%s reaches %s, which only %s may: state a fact instead (observe.go)", path, sel.Sel.Name, own)
			}
			return true
		})
	}
}

// TestControllerOwnsItsState: the controller and its ZooKeeper (package controller) keep their
// state in unexported fields, so no engine file can write a znode or a session. Only controller.go,
// the engine's side of the controller, calls the methods that act (handlers, timers, sessions,
// the leader's own ISR write); the rest of the engine reads through the accessors (the exported
// methods declared in controller/read.go). The test hooks (…ForTest) are for tests alone.
func TestControllerOwnsItsState(t *testing.T) {
	accessors, acting, funcs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for path, f := range packageSources(t, "controller") {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case !d.Name.IsExported():
				case d.Recv == nil:
					funcs[d.Name.Name] = true
				case filepath.Base(path) == "read.go":
					accessors[d.Name.Name] = true
				default:
					acting[d.Name.Name] = true
				}
			case *ast.GenDecl:
				exported, _ := exportedFields(d, func(ts *ast.TypeSpec) bool { return ts.Name.Name == "Controller" || !ts.Name.IsExported() })
				for _, name := range exported {
					t.Errorf("%s: %s is exported: the controller's state is its own", path, name)
				}
			}
		}
	}
	if len(accessors) == 0 || len(acting) == 0 || !funcs["New"] {
		t.Fatalf("read %d accessors, %d acting methods and New? %v: is the parse broken?", len(accessors), len(acting), funcs["New"])
	}
	for name := range acting {
		if accessors[name] {
			t.Errorf("controller method %s is both an accessor and an acting method", name)
		}
	}
	for path, f := range engineSources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			pkg, _ := sel.X.(*ast.Ident)
			switch {
			case strings.HasSuffix(name, "ForTest") && acting[name]:
				t.Errorf("%s calls %s: a test hook", path, name)
			case path == "controller.go":
			case acting[name], pkg != nil && pkg.Name == "controller" && funcs[name]:
				t.Errorf("%s reaches the controller's %s, which only controller.go may: read through the accessors (controller/read.go) or a shortcut (shortcuts.go)", path, name)
			}
			return true
		})
	}
}

// TestBrokerOwnsItsState: what package broker holds is its own. Its structs' fields are
// unexported (the engine reads and changes them only through the package's methods), and its
// test hooks (...ForTest, standing in for Kafka's tests building a class in a given state) are
// called from tests only. The broker's code moves there in steps (docs/engine.md, issue 11); this
// guard grows with it.
func TestBrokerOwnsItsState(t *testing.T) {
	hooks, structs := map[string]bool{}, 0
	for path, f := range packageSources(t, "broker") {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if strings.HasSuffix(d.Name.Name, "ForTest") {
					hooks[d.Name.Name] = true
				}
			case *ast.GenDecl:
				// The ...Rules types are what a broker is handed (the era's and the config's rules
				// for its fetcher threads and replica manager), IsrWrite is ZooKeeper's answer
				// to it, and Event is what it says (events.go: data it hands its Cluster, sharing
				// none of its state but slices read as they are): not its state.
				exported, n := exportedFields(d, func(ts *ast.TypeSpec) bool {
					return !strings.HasSuffix(ts.Name.Name, "Rules") && ts.Name.Name != "IsrWrite" && ts.Name.Name != "Event"
				})
				structs += n
				for _, name := range exported {
					t.Errorf("%s: %s is exported: the broker's state is its own", path, name)
				}
			}
		}
	}
	if structs == 0 || len(hooks) == 0 {
		t.Fatalf("read %d structs and %d test hooks: is the parse broken?", structs, len(hooks))
	}
	for path, f := range engineSources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && hooks[sel.Sel.Name] {
				t.Errorf("%s calls %s: a test hook", path, sel.Sel.Name)
			}
			return true
		})
	}
}

// TestBrokerReachesOnlyItself: a broker's handlers (package broker's, over their brk.Broker as
// Host) reach only their own broker's state. The cluster hands a Broker nothing of another
// broker's: no brk.Cluster method returns a type of the package's state (the storage the engine
// lends, a Fetch's and a parked produce's, and the rules and ZooKeeper's answer, are not state).
// The engine's side of Cluster (broker_cluster.go) reaches no broker but its own. Elsewhere in
// the engine, a broker found by index (e.brokers[i]) is read for its process (its brk.Broker's
// State, Dead, ..., its isolation, its incarnation), not its replication state, except by the
// readers (the read API, the checker's adapter, CheckExpect: read.go, read_agenda.go,
// checker.go, run.go), the cluster's build (engine.go) and the controller's context
// (controller.go: the partitions on a broker); only the readers call e.replicaOn, another
// broker's replica.
func TestBrokerReachesOnlyItself(t *testing.T) {
	state := map[string]bool{}
	var cluster *ast.InterfaceType
	for _, f := range packageSources(t, "broker") {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if _, ok := ts.Type.(*ast.StructType); ok && !strings.HasSuffix(ts.Name.Name, "Rules") {
					state[ts.Name.Name] = true
				}
				if it, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.Name == "Cluster" {
					cluster = it
				}
			}
		}
	}
	for _, lent := range []string{"FetchMessage", "DelayedProduce", "IsrWrite"} {
		delete(state, lent)
	}
	if cluster == nil || !state["Partition"] || !state["Broker"] {
		t.Fatalf("Cluster found %v, %d state types: is the parse broken?", cluster != nil, len(state))
	}
	for _, m := range cluster.Methods.List {
		fn, ok := m.Type.(*ast.FuncType)
		if !ok || fn.Results == nil {
			continue
		}
		ast.Inspect(fn.Results, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && state[id.Name] {
				t.Errorf("brk.Cluster.%s returns a %s: the cluster hands a broker nothing of another's state", m.Names[0].Name, id.Name)
			}
			return true
		})
	}
	process := map[string]bool{"id": true, "incarnation": true, "isolated": true, "brokerEpoch": true, "startsOnExpiry": true,
		"State": true, "Running": true, "ShuttingDown": true, "Dead": true, "DiskFailed": true, "ShutdownAttempts": true}
	readers := map[string]bool{"read.go": true, "read_agenda.go": true, "checker.go": true, "run.go": true}
	for path, f := range engineSources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if path == "broker_cluster.go" && n.Sel.Name == "brokers" {
					t.Errorf("%s reaches e.brokers: the engine's side of a broker's Cluster reaches no other broker", path)
				}
				ix, ok := n.X.(*ast.IndexExpr)
				if !ok {
					return true
				}
				if sel, ok := ix.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "brokers" && !process[n.Sel.Name] &&
					!readers[path] && path != "engine.go" && path != "controller.go" {
					t.Errorf("%s reads e.brokers[...].%s: another broker's replication state is its own (readers: e.replicaOn)", path, n.Sel.Name)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "replicaOn" && !readers[path] {
					t.Errorf("%s calls replicaOn: only the readers read another broker's replica", path)
				}
			}
			return true
		})
	}
}

// TestBrokerHandlesItsMessages: a broker's messages and timers go in through its entry points
// (brk.Broker.Handle, RequestFailed and the timer methods: kafka_apis.go, Kafka's KafkaApis and
// the broker's scheduled tasks), which find the handler; the engine calls those, never a handler
// itself. A handler is a method an entry point calls on anything but its Broker (the replica
// manager, a fetcher thread, the fetcher manager), known in the engine by its name and its
// arguments' count (a handler is handed the Host: brk.Broker.RequestFailed(req) is an entry point,
// a thread's RequestFailed(h, req) a handler). The exception: the cluster's start applies each
// broker's first LeaderAndIsr at once, with no round trip at time 0 (start.go, through
// replica_manager.go). Every entry point is called by the engine (network.go's deliver and
// requestFailed, engine.go's handle).
func TestBrokerHandlesItsMessages(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("broker", "kafka_apis.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]int{} // name → the count of its arguments
	entries := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Body == nil {
			continue
		}
		recv := fn.Recv.List[0].Names[0].Name
		if fn.Name.IsExported() {
			entries[fn.Name.Name] = true
		}
		methodCalls(fn.Body, func(call *ast.CallExpr, sel *ast.SelectorExpr) {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == recv {
				return // the Broker's own: Send, Now, a helper
			}
			handlers[sel.Sel.Name] = len(call.Args)
		})
	}
	if len(handlers) < 10 || !entries["Handle"] || !entries["RequestFailed"] {
		t.Fatalf("found %d handlers and entry points %v: is the parse broken?", len(handlers), entries)
	}
	allowed := map[string]string{"BecomeLeaderOrFollower": "replica_manager.go"}
	called := map[string]bool{}
	for path, f := range engineSources(t) {
		methodCalls(f, func(call *ast.CallExpr, sel *ast.SelectorExpr) {
			name := sel.Sel.Name
			if entries[name] {
				called[name] = true
			}
			if arity, ok := handlers[name]; ok && arity == len(call.Args) && allowed[name] != path {
				t.Errorf("%s calls the broker's handler %s: the broker's entry points (brk.Broker.Handle, RequestFailed, its timers) find it", path, name)
			}
		})
	}
	for name := range entries {
		if !called[name] {
			t.Errorf("the engine never calls brk.Broker.%s: the dispatch does not reach that entry point", name)
		}
	}
}

// TestEngineKnowsNoPage: the page's code lives in engine/view, on the read API. No engine file
// declares a view, view options, a focus or a detail (engine/view imports engine, so the engine
// cannot call it back; this keeps the page's words from growing back here).
func TestEngineKnowsNoPage(t *testing.T) {
	for path, f := range engineSources(t) {
		names := map[string]string{}
		for name, obj := range f.Scope.Objects {
			names[name] = obj.Kind.String()
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
				names[fn.Name.Name] = "method"
			}
		}
		for name, kind := range names {
			lower := strings.ToLower(name)
			for _, word := range []string{"view", "focus", "detail", "verdict"} {
				if strings.Contains(lower, word) {
					t.Errorf("%s declares %s %s: the page's code belongs in engine/view", path, kind, name)
				}
			}
		}
	}
}

// engineSources parses package engine's own (non-test) files, by file name.
// methodCalls calls visit with every call of the form x.Name(...) under n.
func methodCalls(n ast.Node, visit func(*ast.CallExpr, *ast.SelectorExpr)) {
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				visit(call, sel)
			}
		}
		return true
	})
}

func engineSources(t *testing.T) map[string]*ast.File { return packageSources(t, ".") }

// packageSources parses the (non-test) files of the engine package in dir, by path.
func packageSources(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = f
	}
	return out
}

// exportedFields reports every exported field of the struct types in d that check picks, as
// "Type.Field", and counts the structs it looked at.
func exportedFields(d *ast.GenDecl, check func(*ast.TypeSpec) bool) (names []string, structs int) {
	for _, spec := range d.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok || !check(ts) {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		structs++
		for _, field := range st.Fields.List {
			for _, n := range field.Names {
				if n.IsExported() {
					names = append(names, ts.Name.Name+"."+n.Name)
				}
			}
			// An embedded field is named for its type: exported, anyone holding the struct can
			// replace it (a value of an unexported type is the package's own to hand out).
			if len(field.Names) == 0 && ts.Name.IsExported() {
				typ := field.Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if sel, ok := typ.(*ast.SelectorExpr); ok {
					typ = sel.Sel
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					names = append(names, ts.Name.Name+"."+id.Name+" (embedded)")
				}
			}
		}
	}
	return names, structs
}
