package stack_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The modules' wiring knows nothing of HTTP: no file of this package imports the server (its
// sub-package serve joins the two for the composition root).
func TestStackDoesNotImportTheServer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("files %v %v", files, err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "pvebill/server" || strings.HasPrefix(p, "pvebill/server/") && p != "pvebill/server/config" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
