package main

import "testing"

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want kind
	}{
		{"a/b.go", kindGo},
		{"README.md", kindProse},
		{"openapi.yaml", kindProse},
		{"docker/compose.yml", kindProse},
		{"models/migrations/mysql/0001_init.sql", kindSQL},
		{"whmcs/modules/servers/pvebill/lib/Client.php", kindPHP},
		{"scripts/whmcs-test.sh", kindHash},
		{"Makefile", kindHash},
		{".ci/run", kindHash},
		{"run", kindNone},
		{"go.sum", kindNone},
		{"i18n/catalog/en.json", kindNone},
	} {
		if got := kindOf(c.rel); got != c.want {
			t.Errorf("kindOf(%q) = %d, want %d", c.rel, got, c.want)
		}
	}
}

func TestCommentOf(t *testing.T) {
	for _, c := range []struct {
		line        string
		k           kind
		inBlock     bool
		want        string
		wantInBlock bool
	}{
		{`x := 1 # R1`, kindHash, false, `# R1`, false},
		{`echo "#R1" $#`, kindHash, false, ``, false},
		{`SELECT '--R1' -- R2`, kindSQL, false, `-- R2`, false},
		{`$a = "//R1"; // R2`, kindPHP, false, `// R2`, false},
		{`$a = 'x'; /* R3`, kindPHP, false, ` R3`, true},
		{` * R4`, kindPHP, true, ` * R4`, true},
		{` R5 */ $b = 1; # R6`, kindPHP, true, `R5  # R6`, false},
		{`'it\'s' # R7`, kindPHP, false, `# R7`, false},
	} {
		got, open := commentOf(c.line, c.k, blockState(c.inBlock))
		if got != c.want || bool(open) != c.wantInBlock {
			t.Errorf("commentOf(%q) = %q, %v; want %q, %v", c.line, got, open, c.want, c.wantInBlock)
		}
	}
}

func TestDocCitations(t *testing.T) {
	d := &Docs{Rules: map[int]bool{}, Sections: map[string]map[string]bool{}}
	d.AddDoc("proxmox", "## 2. Tasks\n### 2.3 UPID\n### 5.6. Sizes\n#### §14 Consoles\n")
	for _, c := range []struct {
		text string
		want []string // "doc §section" per citation, "doc" for the file alone
	}{
		{"see docs/proxmox.md §2.3.", []string{"proxmox", "proxmox §2.3"}},
		{"docs/proxmox.md\n §5.6 and §14", []string{"proxmox", "proxmox §5.6", "proxmox §14"}},
		{"§2.3, §2 or §5.6 of docs/proxmox.md", []string{"proxmox", "proxmox §2.3", "proxmox §2", "proxmox §5.6"}},
		{"x/docs/other.md and mydocs/x.md", nil},
		{"`docs/proxmox.md` §2.3. Then §14 of `docs/proxmox.md`", []string{"proxmox", "proxmox §2.3", "proxmox", "proxmox §14"}},
		// (split so that the repository-wide check does not read this planted citation)
		{"§9.9 of docs/" + "proxmox.md", []string{"proxmox", "proxmox §9.9 (missing)"}},
	} {
		var got []string
		for _, ct := range docCitations(c.text) {
			s := ct.doc
			if ct.section != "" {
				s += " §" + ct.section
			}
			if d.missing(ct.doc, ct.section) != "" {
				s += " (missing)"
			}
			got = append(got, s)
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: got %v, want %v", c.text, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: got %v, want %v", c.text, got, c.want)
				break
			}
		}
	}
}
