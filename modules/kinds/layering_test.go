package kinds_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// kindPackages may compare guest kinds: the kinds themselves and the Proxmox client, its config
// parsers and its simulator, which speak of /lxc and /qemu paths. Everything else — plans,
// provision, reinstall, executor, operation, server, jobs, usage, models, main — dispatches on a
// kind only through the modules' interfaces (the plans through each kind's plans.KindRules).
var kindPackages = []string{"modules/lxc", "modules/qemu", "modules/pve"}

// kindWords are the string spellings of a kind: the API's guest types and Proxmox's.
var kindWords = map[string]bool{"vm": true, "container": true, "lxc": true, "qemu": true}

// kindIdents are the plan model's kind constants.
var kindIdents = map[string]bool{"VM": true, "Container": true}

// isKind reports whether e names a guest kind: plans.VM, plans.Container (under any import
// name of the plans package) or a kind's string literal.
func isKind(e ast.Expr, plansNames map[string]bool) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(x.Value)
		return err == nil && kindWords[s]
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && plansNames[id.Name] && kindIdents[x.Sel.Name]
	case *ast.CallExpr: // plans.GuestType("vm")
		return len(x.Args) == 1 && isKind(x.Args[0], plansNames)
	}
	return false
}

// kindComparisons lists the places in one file that compare a value with a guest kind: ==, !=
// and switch cases.
func kindComparisons(fset *token.FileSet, f *ast.File) []string {
	plansNames := map[string]bool{}
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "pvebill/modules/plans" {
			name := "plans"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			plansNames[name] = true
		}
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) && (isKind(x.X, plansNames) || isKind(x.Y, plansNames)) {
				out = append(out, fset.Position(x.Pos()).String())
			}
		case *ast.CaseClause:
			for _, e := range x.List {
				if isKind(e, plansNames) {
					out = append(out, fset.Position(e.Pos()).String())
				}
			}
		}
		return true
	})
	return out
}

// No production code outside the kinds compares a guest kind: what differs between kinds is an
// optional interface of the module (modules/kinds/optional.go), implemented in the kind's package.
func TestNoKindComparisonsOutsideKinds(t *testing.T) {
	scanProduction(t, kindPackages, func(fset *token.FileSet, f *ast.File) {
		for _, at := range kindComparisons(fset, f) {
			t.Errorf("%s: compares a guest kind outside the kinds (add an optional interface in modules/kinds/optional.go)", at)
		}
	})
}

// scanProduction parses every production Go file of the module outside the skipped packages
// and hands each to visit.
func scanProduction(t *testing.T, skip []string, visit func(*token.FileSet, *ast.File)) {
	t.Helper()
	scanGo(t, skip, productionFiles, visit)
}

// goFiles says which Go files a scan reads.
type goFiles int

const (
	productionFiles goFiles = iota // the _test.go files left out
	allFiles                       // tests too
)

// scanGo parses the module's Go files of the kind which outside the skipped packages and hands
// each to visit.
func scanGo(t *testing.T, skip []string, which goFiles, visit func(*token.FileSet, *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || within(rel, skip) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || which == productionFiles && strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		visit(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files from %s", scanned, root)
	}
}

// The scan finds each form of a kind comparison, under any import name, and nothing else.
func TestKindComparisonsFound(t *testing.T) {
	src := `package p

import pl "pvebill/modules/plans"

func f(kind pl.GuestType, typ string, n int) {
	if kind == pl.VM { }
	if pl.Container != kind { }
	if typ == "lxc" || "qemu" == typ { }
	if string(kind) == "container" { }
	if kind == pl.GuestType("vm") { }
	switch kind {
	case pl.VM:
	}
	switch typ {
	case "node", "qemu":
	}
	if typ == "node" || n == 2 || kind == "" { }
	_ = map[string]bool{"vm": true}
	f(pl.VM, "lxc", 1)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := kindComparisons(fset, f)
	want := []string{"planted.go:6:5", "planted.go:7:5", "planted.go:8:5", "planted.go:8:21", "planted.go:9:5",
		"planted.go:10:5", "planted.go:12:7", "planted.go:15:15"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("found %v\nwant  %v", got, want)
	}
}

// kindCalls are the Proxmox client's calls that name a guest kind: outside the kinds, a flow
// reaches a guest through a kind's interface, never through them (R12, R13).
var kindCalls = map[string]bool{"ListLXC": true, "LXC": true, "QEMU": true}

// kindVocabulary are config keys only one kind has: a container's root filesystem.
var kindVocabulary = map[string]bool{"rootfs": true}

// kindCallPackages may make them: the kinds, the registry and the client itself.
var kindCallPackages = []string{"modules/lxc", "modules/qemu", "modules/kinds", "modules/pve"}

// Outside the kinds, no production code calls the client's kind-named calls or names a kind's own
// config keys: the swap sampler reads through kinds.SwapSampler, the reinstall labels mounts
// through each kind's Reader, the flows reach guests through the modules.
func TestNoKindCallsOutsideKinds(t *testing.T) {
	scanProduction(t, kindCallPackages, func(fset *token.FileSet, f *ast.File) {
		for _, at := range kindCallsIn(fset, f) {
			t.Errorf("%s outside the kinds (add an optional interface in modules/kinds; the kind that owns a key says it)", at)
		}
	})
}

// kindCallsIn lists the places in one file that name a kind-named call of the client — as a
// selector (c.LXC(...)), a method value (f := n.ListLXC) or a bare identifier (a dot import, a
// field, a local of that name) — or a kind's own config key.
func kindCallsIn(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if kindCalls[x.Name] {
				out = append(out, fmt.Sprintf("%s: names %s", fset.Position(x.Pos()), x.Name))
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(x.Value); x.Kind == token.STRING && err == nil && kindVocabulary[s] {
				out = append(out, fmt.Sprintf("%s: names %q", fset.Position(x.Pos()), s))
			}
		}
		return true
	})
	return out
}

// The scan finds the kind-named calls however they are spelled, and the kind's config keys, and
// nothing else.
func TestKindCallsFound(t *testing.T) {
	src := `package p

import . "pvebill/modules/pve"

func f(c *Client, n *Node) {
	_ = c.Node("a").LXC(100)
	list := n.ListLXC
	_ = QEMU
	var LXC int
	_ = map[string]int{"rootfs": LXC}
	_, _ = list, "rootfs0"
	_ = c.Node("a").Qemu(1)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := kindCallsIn(fset, f)
	want := []string{`planted.go:6:18: names LXC`, `planted.go:7:12: names ListLXC`, `planted.go:8:6: names QEMU`,
		`planted.go:9:6: names LXC`, `planted.go:10:21: names "rootfs"`, `planted.go:10:31: names LXC`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("found %q\nwant  %q", got, want)
	}
}

// planModel is the one file of the plans that names the kinds: it declares the guest types and
// the plan's fields (its OS catalog per kind).
const planModel = "plan.go"

// The plans hold no kind's rules: outside the plan model, no production file of modules/plans
// names a kind (plans.Container, plans.VM or a kind's string). What a kind allows or refuses is
// its plans.KindRules, in the kind's package.
func TestPlansNameNoKind(t *testing.T) {
	dir, err := filepath.Abs("../plans")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || filepath.Base(path) == planModel {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		scanned++
		for _, at := range kindNames(fset, f) {
			t.Errorf("%s in the plans (a kind's rule belongs in its plans.KindRules)", at)
		}
	}
	if scanned < 5 {
		t.Fatalf("scanned only %d files of %s", scanned, dir)
	}
}

// kindNames lists the places in one file of the plans package that name a kind: the bare kind
// constants (a field of the same name, s.OS.Container, is the plan's data, not a kind) and a
// kind's string.
func kindNames(fset *token.FileSet, f *ast.File) []string {
	sels := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if x, ok := n.(*ast.SelectorExpr); ok {
			sels[x.Sel] = true
		}
		return true
	})
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if kindIdents[x.Name] && !sels[x] {
				out = append(out, fmt.Sprintf("%s: names %s", fset.Position(x.Pos()), x.Name))
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(x.Value); x.Kind == token.STRING && err == nil && kindWords[s] {
				out = append(out, fmt.Sprintf("%s: names %q", fset.Position(x.Pos()), s))
			}
		}
		return true
	})
	return out
}

// The scan of the plans finds a bare kind constant and a kind's string, not the catalog's
// fields.
func TestPlanKindNamesFound(t *testing.T) {
	src := `package plans

func f(p Plan, t GuestType) {
	if t == Container { }
	_ = p.OS.Container
	_ = p.OS.VM
	_ = []GuestType{VM}
	_ = string(t) + "lxc"
	_ = "vms"
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := kindNames(fset, f)
	want := []string{`planted.go:4:10: names Container`, `planted.go:7:18: names VM`, `planted.go:8:18: names "lxc"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("found %q\nwant  %q", got, want)
	}
}

func within(rel string, pkgs []string) bool {
	for _, p := range pkgs {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// Outside models, no code — tests included — reaches the database's handle (models.DB's Gorm
// field): a flow calls a method of models.DB, a transaction lives in models, and a test that
// needs more uses models/dbtest's helpers. (depguard keeps gorm's import out of production code;
// this catches the field, which needs no import.)
func TestDatabaseOnlyThroughModels(t *testing.T) {
	scanGo(t, []string{"models"}, allFiles, func(fset *token.FileSet, f *ast.File) {
		for _, at := range gormUses(fset, f) {
			t.Errorf("%s: uses models.DB's Gorm field outside models (add a method on models.DB, or a models/dbtest helper for a test)", at)
		}
	})
}

// gormUses lists the places in one file that select a field or method named Gorm.
func gormUses(fset *token.FileSet, f *ast.File) []string {
	return selectors(fset, f, func(x *ast.SelectorExpr) bool { return x.Sel.Name == "Gorm" })
}

// selectors lists the places in one file of the selectors (x.Name) match accepts.
func selectors(fset *token.FileSet, f *ast.File, match func(*ast.SelectorExpr) bool) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if x, ok := n.(*ast.SelectorExpr); ok && match(x) {
			out = append(out, fset.Position(x.Sel.Pos()).String())
		}
		return true
	})
	return out
}

// The scan finds the handle however it is reached.
func TestGormUsesFound(t *testing.T) {
	src := `package p

func f(s *svc, db *models.DB) {
	_ = s.db.Gorm.Where("x")
	g := db.Gorm
	_ = models.GetService(ctx, s.o.DB.Gorm, k)
	_, _ = g, gorm
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := gormUses(fset, f)
	want := []string{"planted.go:4:11", "planted.go:5:10", "planted.go:6:36"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("found %v\nwant  %v", got, want)
	}
}

// Nothing waits on the clock by sleeping: a test waits
// for an observable fact (the poll helper, a channel, a counted round), and production code
// waits on a timer it can stop. The simulator's task timing, the chaos runs and the bench are
// what may pause for a while.
func TestNoSleeps(t *testing.T) {
	scanGo(t, []string{"modules/pve/pvesim", "scripts/bench"}, allFiles, func(fset *token.FileSet, f *ast.File) {
		if strings.Contains(filepath.Base(fset.Position(f.Pos()).Filename), "chaos") {
			return
		}
		for _, at := range sleeps(fset, f) {
			t.Errorf("%s: time.Sleep (wait for the fact with the poll helper, a channel or a counter instead)", at)
		}
	})
}

// sleeps lists the places in one file that name time.Sleep.
func sleeps(fset *token.FileSet, f *ast.File) []string {
	return selectors(fset, f, func(x *ast.SelectorExpr) bool {
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "time" && x.Sel.Name == "Sleep"
	})
}

// The scan finds a sleep however it is called.
func TestSleepsFound(t *testing.T) {
	src := `package p

func f() {
	time.Sleep(time.Second)
	defer time.Sleep(1)
	g := time.Sleep
	go func() { time.Sleep(2) }()
	_ = clock.Sleep
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := sleeps(fset, f)
	want := []string{"planted.go:4:7", "planted.go:5:13", "planted.go:6:12", "planted.go:7:19"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("found %v\nwant  %v", got, want)
	}
}
