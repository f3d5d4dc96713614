package server_test

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"pvebill/i18n"
)

// The names of the contract are written three times: in docs/api.md for people, in openapi.yaml
// for programs, and in the code. These tests keep the three the same set, structurally: a name
// added to one and not the others fails here, whoever adds it.

// apiDoc is docs/api.md.
func apiDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mdSection is the text of the section headed exactly heading ("## Error codes") up to the
// next heading of the same or a higher level.
func mdSection(t *testing.T, md, heading string) string {
	t.Helper()
	level := heading[:strings.Index(heading, " ")+1]
	start := strings.Index(md, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("docs/api.md has no section %q", heading)
	}
	rest := md[start+len(heading)+2:]
	for i := 0; i < len(rest); {
		j := strings.Index(rest[i:], "\n#")
		if j < 0 {
			break
		}
		i += j + 1
		line := rest[i:]
		if h, _, _ := strings.Cut(line, " "); len(h) <= len(strings.TrimSpace(level)) && strings.Trim(h, "#") == "" {
			return rest[:i]
		}
	}
	return rest
}

var (
	// snakeSpan is a code span holding one snake_case name.
	snakeSpan = regexp.MustCompile("`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`")
	// parenthesis is a parenthesised remark without nested parentheses.
	parenthesis = regexp.MustCompile(`\([^()]*\)`)
)

// snakeNames lists the snake_case code spans of text, parenthesised remarks left out (they
// name fields or rules, not members of the list).
func snakeNames(text string) []string {
	for parenthesis.MatchString(text) {
		text = parenthesis.ReplaceAllString(text, "")
	}
	var out []string
	for _, m := range snakeSpan.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// docActions are the operation actions docs/api.md lists: the code spans inside "`action` (…)"
// of the operation object.
func docActions(t *testing.T, md string) []string {
	t.Helper()
	obj := mdSection(t, md, "## Objects")
	_, after, ok := strings.Cut(obj, "`action` (")
	if !ok {
		t.Fatal("docs/api.md Objects does not list the operation's `action` values")
	}
	list, _, ok := strings.Cut(after, ")")
	if !ok {
		t.Fatal("docs/api.md: the operation's `action` list is not closed")
	}
	return snakeNames(list)
}

// docErrorCodes are the error codes docs/api.md lists in its Error codes section, up to the
// sentence about the reinstall blockers (which are not problem codes).
func docErrorCodes(t *testing.T, md string) []string {
	t.Helper()
	sec := mdSection(t, md, "## Error codes")
	sec, _, _ = strings.Cut(sec, "The reinstall blockers")
	return snakeNames(sec)
}

var (
	// jsonBlock is a fenced JSON example.
	jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")
	// jsonKey is a key of a JSON example.
	jsonKey = regexp.MustCompile(`"([a-z][a-z0-9_]*)"\s*:`)
	// objectSpan is a code span that shows an object or a list of objects.
	objectSpan = regexp.MustCompile("`(\\[?\\{[^`]*)`")
	// quoted is a quoted snake_case name.
	quoted = regexp.MustCompile(`"([a-z][a-z0-9_]*)"`)
)

// spanKeys are the keys of an object span: quoted names that are not values (not after ':' or
// '|') and are followed by what follows a key in the prose form: ':', ',', '}', '?', ']' or ' ('.
func spanKeys(span string) []string {
	var out []string
	for _, ix := range quoted.FindAllStringSubmatchIndex(span, -1) {
		before := strings.TrimRight(span[:ix[0]], " \n")
		after := span[ix[1]:]
		if strings.HasSuffix(before, ":") || strings.HasSuffix(before, "|") {
			continue
		}
		if after == "" || strings.ContainsAny(after[:1], ":,}?]") || strings.HasPrefix(after, " (") {
			out = append(out, span[ix[2]:ix[3]])
		}
	}
	return out
}

// docFieldNames are the field names docs/api.md shows: the keys of its JSON examples and the
// quoted names of its object spans (`{"intent_id", "confirmations"}`).
func docFieldNames(md string) []string {
	seen := map[string]bool{}
	for _, b := range jsonBlock.FindAllStringSubmatch(md, -1) {
		for _, k := range jsonKey.FindAllStringSubmatch(b[1], -1) {
			seen[k[1]] = true
		}
	}
	// The Objects section names the fields of an operation and a service one by one.
	if _, objects, ok := strings.Cut(md, "\n## Objects\n"); ok {
		objects, _, _ = strings.Cut(objects, "\n## ")
		for _, n := range snakeNames(objects) {
			if n != "null" {
				seen[n] = true
			}
		}
	}
	prose := jsonBlock.ReplaceAllString(md, "")
	for _, s := range objectSpan.FindAllStringSubmatch(prose, -1) {
		for _, k := range spanKeys(s[1]) {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// storedOnly are names docs/api.md shows of records that no route serves, so openapi.yaml has
// no schema for them: a scheduled backup's operation payload ({"scheduled": <window>}) and the
// detail of a missed window's audit event ({"plan", "window", "services"}).
var storedOnly = map[string]bool{"scheduled": true, "window": true}

// specEnum is the enum of property prop of component schema name in openapi.yaml.
func specEnum(t *testing.T, doc *openapi3.T, name, prop string) []string {
	t.Helper()
	sr := doc.Components.Schemas[name]
	if sr == nil || sr.Value == nil || sr.Value.Properties[prop] == nil {
		t.Fatalf("openapi.yaml has no %s.%s", name, prop)
	}
	var out []string
	for _, v := range sr.Value.Properties[prop].Value.Enum {
		out = append(out, v.(string))
	}
	if len(out) == 0 {
		t.Fatalf("openapi.yaml %s.%s has no enum", name, prop)
	}
	sort.Strings(out)
	return out
}

// specPropertyNames are the property names of every schema openapi.yaml declares, in its
// components and in its operations' request and response bodies, nested ones included.
func specPropertyNames(doc *openapi3.T) map[string]bool {
	names := map[string]bool{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(sr *openapi3.SchemaRef)
	walk = func(sr *openapi3.SchemaRef) {
		if sr == nil || sr.Value == nil || seen[sr.Value] {
			return
		}
		s := sr.Value
		seen[s] = true
		for k, p := range s.Properties {
			names[k] = true
			walk(p)
		}
		walk(s.Items)
		if s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema)
		}
		for _, l := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, x := range l {
				walk(x)
			}
		}
	}
	for _, sr := range doc.Components.Schemas {
		walk(sr)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema)
				}
			}
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					for _, mt := range r.Value.Content {
						walk(mt.Schema)
					}
				}
			}
		}
	}
	return names
}

// missing lists the members of want that have is not.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// sameNames fails t unless a and b hold the same names, naming what each lacks.
func sameNames(t *testing.T, what, aName string, a []string, bName string, b []string) {
	t.Helper()
	if m := missing(a, b); len(m) > 0 {
		t.Errorf("%s in %s but not in %s: %v", what, aName, bName, m)
	}
	if m := missing(b, a); len(m) > 0 {
		t.Errorf("%s in %s but not in %s: %v", what, bName, aName, m)
	}
}

// R37: docs/api.md and openapi.yaml list the same operation actions (the operation's `action`
// enum) and the same error codes (the problem's `code` enum), and every field name docs/api.md
// shows in its examples and object spans is a property of a schema in openapi.yaml.
func TestDocsAndOpenAPIAgreeOnNames(t *testing.T) {
	md, doc := apiDoc(t), loadSpec(t)
	actions, codes := docActions(t, md), docErrorCodes(t, md)
	if len(actions) < 10 || len(codes) < 20 {
		t.Fatalf("docs/api.md read as %d actions and %d error codes: the lists were not found", len(actions), len(codes))
	}
	sameNames(t, "operation actions", "docs/api.md", actions, "openapi.yaml", specEnum(t, doc, "Operation", "action"))
	sameNames(t, "error codes", "docs/api.md", codes, "openapi.yaml", specEnum(t, doc, "Problem", "code"))
	props := specPropertyNames(doc)
	fields := docFieldNames(md)
	if len(fields) < 50 {
		t.Fatalf("docs/api.md read as %d field names: the examples were not found", len(fields))
	}
	for _, f := range fields {
		if !props[f] && !storedOnly[f] {
			t.Errorf("field %q is in docs/api.md but no schema of openapi.yaml has it", f)
		}
	}
}

// R37, the Go side: the stable error codes the code can emit (i18n.Codes, each with a message in
// every catalog) are exactly openapi.yaml's problem codes, and the actions the executor runs are
// exactly its operation actions.
func TestCodeAndOpenAPIAgreeOnNames(t *testing.T) {
	doc := loadSpec(t)
	var codes []string
	for _, c := range i18n.Codes {
		codes = append(codes, string(c))
	}
	sameNames(t, "error codes", "i18n.Codes", codes, "openapi.yaml", specEnum(t, doc, "Problem", "code"))

	h := newServicesHarness(t, "sqlite")
	var actions []string
	for _, a := range h.st.Actions() {
		actions = append(actions, a.Name)
	}
	sameNames(t, "operation actions", "the executor's actions", actions, "openapi.yaml", specEnum(t, doc, "Operation", "action"))
}
