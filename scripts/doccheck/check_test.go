package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedRepo copies testdata/repo into a temporary folder and returns it. Files whose planted
// citations would otherwise sit in the repository as Go or PHP source are kept as NAME.in and
// get their real name in the copy.
func plantedRepo(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join("testdata", "repo"), t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, strings.TrimSuffix(rel, ".in"))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestRunPlantedCitations runs the check over testdata/repo, a small repository whose docs/
// define R1, R2, design §1 and proxmox §5, §5.6, §11, §11.6, and whose files plant one wrong
// citation of each kind in each file type the check reads (good.go holds only right ones).
// Every finding must be exactly one of these, and every one of these must be found.
func TestRunPlantedCitations(t *testing.T) {
	// Each finding is named by its place and a part of its reason that cites nothing itself
	// (this file is checked too when make lint runs over the repository).
	want := []struct{ at, reason string }{
		{".ci/run:2", "rule R88 is not defined"},
		{".ci/run:3", "relative path leaves the repository"},
		{"bad.go:4", "rule R99 is not defined"},
		{"bad.go:5", "outside the repository (the rules are in"},
		{"bad.go:6", "outside the repository (the Proxmox facts are in"},
		{"bad.go:7", "§7.9, which has no such numbered section"},
		{"bad.go:8", "nothere.md, which does not exist"},
		{"bad.go:9", "(shared documents folder)"},
		{"bad.go:9", "relative path leaves the repository"},
		{"bad.go:10", "(shared documents folder)"},
		{"bad.go:12", "rule R42 is not defined"},
		{"bad.go:12", "rule R77 is not defined"},
		{"bad.go:13", "relative path leaves the repository"},
		{"bad.go:16", "§12.3, which has no such numbered section"},
		{"bad.go:17", "§9.9, which has no such numbered section"},
		{"bad.go:19", "outside the repository by its numbering"},
		{"bad.md:3", "rule R85 is not defined"},
		{"bad.md:3", "relative path leaves the repository"},
		{"sub/Makefile:1", "rule R91 is not defined"},
		{"sub/Makefile:3", "rule R89 is not defined"},
		{"sub/bad.php:2", "rule R98 is not defined"},
		{"sub/bad.php:3", "outside the repository"},
		{"sub/bad.php:3", "rule R97 is not defined"},
		{"sub/bad.php:5", "rule R96 is not defined"},
		{"sub/bad.sql:1", "rule R94 is not defined"},
		{"sub/bad.sql:2", "rule R92 is not defined"},
		{"sub/data/data.go:1", "rule R93 is not defined"},
		{"sub/deep/bad.yaml:1", "rule R87 is not defined"},
		{"sub/deep/bad.yaml:2", "rule R86 is not defined"},
		{"sub/deep/bad.yaml:2", "outside the repository"},
	}
	got, err := Run(plantedRepo(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, f := range got {
			if !used[i] && strings.HasPrefix(f.String(), w.at+": ") && strings.Contains(f.Reason, w.reason) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing finding %s: …%s…", w.at, w.reason)
		}
	}
	for i, f := range got {
		if !used[i] {
			t.Errorf("unexpected finding %s", f)
		}
	}
}

// TestRunSkipsDirectories: a skipped directory is not read, and neither is .git.
func TestRunSkipsDirectories(t *testing.T) {
	got, err := Run(plantedRepo(t), []string{"sub", ".ci"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if strings.HasPrefix(f.File, "sub/") || strings.HasPrefix(f.File, ".ci/") {
			t.Errorf("finding in a skipped directory: %s", f)
		}
	}
	if len(got) == 0 {
		t.Fatal("no findings at all: the rest of testdata/repo was not read")
	}
}

// TestRepositoryDocsDefineEveryRule: the real docs/design.md defines R1–R51 and docs/proxmox.md
// the sections the code cites, so the check run by make lint has something to compare with.
func TestRepositoryDocsDefineEveryRule(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "docs", "design.md")); err != nil {
		t.Skip("no docs/design.md")
	}
	d, err := LoadDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 51; n++ {
		if !d.Rules[n] {
			t.Errorf("docs/design.md does not define R%d", n)
		}
	}
	for _, s := range []string{"2.3", "2.5", "4.6", "5.2", "5.6", "6.1", "6.2", "7.1", "9.1", "11.6", "14", "15"} {
		if d.missing("proxmox", s) != "" {
			t.Errorf("docs/proxmox.md has no §%s", s)
		}
	}
}
