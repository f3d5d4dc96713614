package kinds_test

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flowPackages are the packages of the flows: each queues and runs its own operations, and none
// grows back into one type that does everything.
var flowPackages = []string{"modules/provision", "modules/reinstall", "modules/backups", "modules/power",
	"modules/snapshots", "modules/migrate", "modules/password", "modules/placement", "modules/console"}

// The bounds of a flow: a type of at most maxFlowMethods methods, and provision, the lifecycle
// itself, within maxProvisionLines production lines.
const (
	maxFlowMethods    = 25
	maxProvisionLines = 1500
)

// No flow type has more than maxFlowMethods methods, and provision stays within
// maxProvisionLines: a capability with operations of its own is a flow package of its own.
func TestFlowsStaySmall(t *testing.T) {
	methods := map[string]int{}
	lines := 0
	scanProduction(t, nil, func(fset *token.FileSet, f *ast.File) {
		path := filepath.ToSlash(fset.Position(f.Package).Filename)
		pkg := flowOf(path)
		if pkg == "" {
			return
		}
		if pkg == "modules/provision" {
			b, err := os.ReadFile(fset.Position(f.Package).Filename)
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(b), "\n")
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
				methods[pkg+"."+receiverName(fn.Recv.List[0].Type)]++
			}
		}
	})
	for typ, n := range methods {
		if n > maxFlowMethods {
			t.Errorf("%s has %d methods (at most %d): split a flow out", typ, n, maxFlowMethods)
		}
	}
	if lines > maxProvisionLines || lines == 0 {
		t.Errorf("modules/provision has %d production lines (at most %d)", lines, maxProvisionLines)
	}
	if methods["modules/provision.Provisioner"] == 0 {
		t.Fatal("the scan found no method of provision.Provisioner")
	}
}

// flowOf is the flow package a file belongs to, or "".
func flowOf(path string) string {
	for _, p := range flowPackages {
		if strings.Contains(path, "/"+p+"/") && !strings.Contains(strings.SplitN(path, "/"+p+"/", 2)[1], "/") {
			return p
		}
	}
	return ""
}

// receiverName is the type name of a method's receiver (T or *T, type parameters left out).
func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
