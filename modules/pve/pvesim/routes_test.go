package pvesim

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRoutesAreSchemaTemplates checks that every simulated route is a method and path
// template of Proxmox's schema, so no handler is unreachable.
func TestRoutesAreSchemaTemplates(t *testing.T) {
	s := New(Options{})
	if len(s.routes) < len(apiRoutes)+2*len(guestFirewallRoutes) {
		t.Fatalf("%d routes bound, want at least %d", len(s.routes), len(apiRoutes)+2*len(guestFirewallRoutes))
	}
	for key := range s.routes {
		method, tmpl, _ := strings.Cut(key, " ")
		n := s.schema.lookup(tmpl, map[string]string{})
		if n == nil || n.template != tmpl {
			t.Errorf("%s: no such schema template", key)
			continue
		}
		if n.methods[method] == nil {
			t.Errorf("%s: the schema has no %s for it", key, method)
		}
	}
}

// TestImportsNoClient keeps the simulator apart from pvebill: its packages import no
// pvebill package but their own (a client parser imported here would mirror a parsing
// bug on both sides). The test helper simtest is exempt: it builds a client on purpose.
func TestImportsNoClient(t *testing.T) {
	const self = "pvebill/modules/pve/pvesim"
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "simtest" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		checked++
		for _, imp := range fileImports(t, path) {
			if (imp == "pvebill" || strings.HasPrefix(imp, "pvebill/")) && imp != self && !strings.HasPrefix(imp, self+"/") {
				t.Errorf("%s imports %s: the simulator keeps its own implementation of what it imitates", path, imp)
			}
			if imp == self+"/simtest" && !strings.HasSuffix(path, "_test.go") {
				t.Errorf("%s imports the test helper %s", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("only %d files checked", checked)
	}
}

func fileImports(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}
