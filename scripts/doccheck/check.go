package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Finding is one citation that does not hold, at a file's line.
type Finding struct {
	File   string // slash-separated, relative to the repository root
	Line   int
	Reason string
}

// String is the finding as doccheck prints it: "file:line: reason".
func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Reason) }

// segment is a piece of a file's text that is checked: a comment group, a string literal, a
// line or a whole prose file. rules says whether rule ids count in it (comments and prose,
// not code); refs whether citations of files do.
type segment struct {
	line  int // line of the segment's first character
	text  string
	rules bool
	refs  bool
}

var (
	// ruleHeading is how docs/design.md defines a rule: "### R12 — Title".
	ruleHeading = regexp.MustCompile(`(?m)^###\s+R([0-9]+)\b`)
	// sectionHeading is a numbered heading of a docs/*.md file: "## 5. Title", "### 5.6 Title".
	sectionHeading = regexp.MustCompile(`(?m)^#{1,6}\s+§?\s*([0-9]+(?:\.[0-9]+)*)\.?(?:\s|$)`)
	ruleID         = regexp.MustCompile(`\bR([0-9]+)\b`)

	// outside are the citations of documents that are not in the repository: the names the
	// documents in docs/ had before they moved in, and the folder that held them.
	outside = []struct {
		re     *regexp.Regexp
		reason string
	}{
		{regexp.MustCompile(`\b(?:DESIGN|API|STYLE)\.md\b`), "cites a document outside the repository (the rules are in docs/design.md, the HTTP contract in docs/api.md)"},
		{regexp.MustCompile(`\bproxmox-api\.md\b`), "cites a document outside the repository (the Proxmox facts are in docs/proxmox.md)"},
		{regexp.MustCompile(`\b(?:STYLE|DESIGN|API)\s+(?:habit|rule|section|§)\s*[0-9]+`), "cites a document outside the repository by its numbering (cite a rule of docs/design.md or a section of docs/*.md)"},
		{regexp.MustCompile(`(?:\.\./)+shared/|\bshared/(?:docs|reference|fixtures|seeds|hooks)\b`), "cites a path outside the repository (shared documents folder)"},
	}
	// upward is a relative path that climbs: "../x", not the "..." of ".../config".
	upward = regexp.MustCompile(`(?:^|[^.\w/])((?:\.\./)+)`)
	// docCite is a cited docs/*.md file, not as part of a longer path.
	docCite = regexp.MustCompile(`(?:^|[^\w/.-])docs/([\w.-]+?)\.md\b`)
	// sectionAfter is one of the "§N" that follow a cited file: "docs/proxmox.md §5.6 and §6.1".
	sectionAfter = regexp.MustCompile(`^[\s,;:("'` + "`" + `]*(?:(?:and|or)\s+)?§\s*([0-9]+(?:\.[0-9]+)*)`)
	// sectionsBefore are "§2.5 and §9.1 of docs/proxmox.md".
	sectionsBefore = regexp.MustCompile(`((?:§\s*[0-9]+(?:\.[0-9]+)*[\s,]*(?:(?:and|or)\s+)?)+)\s*(?:of|in)\s+` + "`?" + `docs/([\w.-]+?)\.md\b`)
	sectionNumber  = regexp.MustCompile(`§\s*([0-9]+(?:\.[0-9]+)*)`)
)

// Docs is what the repository's docs/ define: the rule ids of docs/design.md and, per
// docs/*.md file (by base name without .md), its numbered sections.
type Docs struct {
	Rules    map[int]bool
	Sections map[string]map[string]bool
}

// LoadDocs reads root/docs. A missing docs/ is not an error: then nothing is defined and every
// citation fails.
func LoadDocs(root string) (*Docs, error) {
	d := &Docs{Rules: map[int]bool{}, Sections: map[string]map[string]bool{}}
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		d.AddDoc(strings.TrimSuffix(filepath.Base(p), ".md"), string(b))
	}
	return d, nil
}

// AddDoc records what the text of docs/<name>.md defines.
func (d *Docs) AddDoc(name, text string) {
	secs := map[string]bool{}
	for _, m := range sectionHeading.FindAllStringSubmatch(text, -1) {
		secs[m[1]] = true
	}
	d.Sections[name] = secs
	if name != "design" {
		return
	}
	for _, m := range ruleHeading.FindAllStringSubmatch(text, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			d.Rules[n] = true
		}
	}
}

// Run checks every file under root that doccheck reads, except under skip (relative
// directories), and returns the findings sorted by file and line.
func Run(root string, skip []string) ([]Finding, error) {
	docs, err := LoadDocs(root)
	if err != nil {
		return nil, err
	}
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[filepath.ToSlash(filepath.Clean(s))] = true
	}
	var out []Finding
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && (skipped[rel] || skipDirs[e.Name()] || rootOutputs[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if kindOf(rel) == kindNone {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, CheckFile(rel, src, docs)...)
		return nil
	})
	sortFindings(out)
	return out, err
}

var (
	// skipDirs are never read, wherever they are.
	skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}
	// rootOutputs are what make build and make run write at the repository root.
	rootOutputs = map[string]bool{"bin": true, "data": true}
)

func sortFindings(list []Finding) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].File != list[j].File {
			return list[i].File < list[j].File
		}
		return list[i].Line < list[j].Line
	})
}

// CheckFile checks one file's text; rel is its slash-separated path from the repository root.
func CheckFile(rel string, src []byte, docs *Docs) []Finding {
	segs, err := segments(rel, src)
	if err != nil {
		return []Finding{{File: rel, Line: 1, Reason: "cannot be read: " + err.Error()}}
	}
	seen := map[Finding]bool{}
	var out []Finding
	for _, s := range segs {
		for _, f := range checkSegment(rel, s, docs) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sortFindings(out)
	return out
}

// checkSegment applies every check that the segment's kind calls for.
func checkSegment(rel string, s segment, docs *Docs) []Finding {
	var out []Finding
	add := func(idx int, reason string) {
		out = append(out, Finding{File: rel, Line: s.line + strings.Count(s.text[:idx], "\n"), Reason: reason})
	}
	if s.rules {
		for _, m := range ruleID.FindAllStringSubmatchIndex(s.text, -1) {
			n, err := strconv.Atoi(s.text[m[2]:m[3]])
			if err != nil || !docs.Rules[n] {
				add(m[0], fmt.Sprintf("rule %s is not defined in docs/design.md", s.text[m[0]:m[1]]))
			}
		}
	}
	if !s.refs {
		return out
	}
	for _, o := range outside {
		for _, m := range o.re.FindAllStringIndex(s.text, -1) {
			add(m[0], o.reason+": "+s.text[m[0]:m[1]])
		}
	}
	for _, m := range upward.FindAllStringSubmatchIndex(s.text, -1) {
		if ups := strings.Count(s.text[m[2]:m[3]], "../"); ups > depth(rel) {
			add(m[2], "relative path leaves the repository: "+pathAt(s.text, m[2]))
		}
	}
	for _, c := range docCitations(s.text) {
		if reason := docs.missing(c.doc, c.section); reason != "" {
			add(c.idx, reason)
		}
	}
	return out
}

// depth is how many directories a file sits below the repository root.
func depth(rel string) int { return strings.Count(rel, "/") }

// pathAt is the path-like text that starts at i.
func pathAt(text string, i int) string {
	j := i
	for j < len(text) && !strings.ContainsRune(" \t\n\"'`)],;", rune(text[j])) {
		j++
	}
	return strings.TrimRight(text[i:j], ".:")
}

// citation is a docs/<doc>.md (and, when section is not "", its §section) cited at idx.
type citation struct {
	idx     int
	doc     string
	section string
}

// docCitations finds the docs/*.md files a text cites, with the sections named after the file
// ("docs/proxmox.md §5.6, §6.1") or before it ("§2.5 and §9.1 of docs/proxmox.md").
func docCitations(text string) []citation {
	var out []citation
	for _, m := range docCite.FindAllStringSubmatchIndex(text, -1) {
		doc := text[m[2]:m[3]]
		out = append(out, citation{idx: m[2] - len("docs/"), doc: doc})
		for rest, off := text[m[1]:], m[1]; ; {
			s := sectionAfter.FindStringSubmatchIndex(rest)
			if s == nil {
				break
			}
			out = append(out, citation{idx: off + s[2], doc: doc, section: rest[s[2]:s[3]]})
			rest, off = rest[s[1]:], off+s[1]
		}
	}
	for _, m := range sectionsBefore.FindAllStringSubmatchIndex(text, -1) {
		doc := text[m[4]:m[5]]
		for _, s := range sectionNumber.FindAllStringSubmatchIndex(text[m[2]:m[3]], -1) {
			out = append(out, citation{idx: m[2] + s[0], doc: doc, section: text[m[2]+s[2] : m[2]+s[3]]})
		}
	}
	return out
}

// missing says why a cited docs/<doc>.md (§section) does not exist, or "" when it does.
func (d *Docs) missing(doc, section string) string {
	secs, ok := d.Sections[doc]
	if !ok {
		return "cites docs/" + doc + ".md, which does not exist"
	}
	if section != "" && !secs[section] {
		return "cites docs/" + doc + ".md §" + section + ", which has no such numbered section"
	}
	return ""
}
