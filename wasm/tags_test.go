//go:build !js

package main

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJSFilesAreTagged fails when a file that touches JS (imports syscall/js or safejs) lacks the
// js && wasm build constraint, so the untagged bridge keeps building and testing natively
// (after hack-pad/safejs's wasm_tags_test.go).
func TestJSFilesAreTagged(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		touchesJS := false
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "syscall/js" || strings.HasPrefix(p, "github.com/hack-pad/safejs") {
				touchesJS = true
			}
		}
		tagged := false
		for _, line := range strings.Split(string(src), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "package ") {
				break
			}
			if constraint.IsGoBuild(line) {
				expr, err := constraint.Parse(line)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				tagged = isJSWasm(expr)
			}
		}
		if touchesJS && !tagged {
			t.Errorf("%s touches JS but lacks //go:build js && wasm", name)
		}
		if tagged && !touchesJS && !strings.HasSuffix(name, "_test.go") {
			t.Logf("%s is tagged js && wasm but does not touch JS: consider moving its logic to untagged code", name)
		}
	}
}

func isJSWasm(expr constraint.Expr) bool {
	and, ok := expr.(*constraint.AndExpr)
	if !ok {
		return false
	}
	x, y := and.X.String(), and.Y.String()
	return (x == "js" && y == "wasm") || (x == "wasm" && y == "js")
}
