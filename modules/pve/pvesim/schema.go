package pvesim

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed schema/pve-apidoc.json.gz
var apidocGz []byte

// apiNode is one node of Proxmox's API-viewer tree as stored in pve-apidoc.json.
type apiNode struct {
	Path     string                     `json:"path"`
	Children []apiNode                  `json:"children"`
	Info     map[string]json.RawMessage `json:"info"`
}

type apiMethod struct {
	AllowToken *int `json:"allowtoken"`
	Parameters struct {
		AdditionalProperties *json.RawMessage           `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	} `json:"parameters"`
}

// schemaParam is one pre-compiled parameter definition.
type schemaParam struct {
	name       string
	typ        string
	optional   bool
	enum       []string
	min, max   *float64
	minLen     int
	maxLen     int
	patternSrc string
	pattern    *regexp.Regexp
	format     string                  // named format, e.g. "pve-vmid" or "dns-name-list"
	props      map[string]*schemaParam // property-string format (format given as an object)
	required   []string                // non-optional keys of props
	defaultKey string                  // key of the property string that may be written without "key="
	aliases    map[string]string       // property-string key aliases
	keyAliases map[string]string       // keys whose name is the value of another key (QEMU net: virtio=MAC sets model=virtio)
	requires   string
	items      *schemaParam
	oneOf      bool
}

// indexedParam is a parameter family such as "mp[n]" accepting mp0..mpMax.
type indexedParam struct {
	prefix string
	max    int
	param  *schemaParam
}

// schemaMethod is one (path template, HTTP method) pair of the API.
type schemaMethod struct {
	template   string
	method     string
	props      map[string]*schemaParam
	required   []string
	indexed    map[string]*indexedParam
	additional int // 0: refuse unknown parameters, 1: allow, -1: not declared (allowed)
	allowToken bool
}

type schemaNode struct {
	template string
	fixed    map[string]*schemaNode
	varName  string
	varNode  *schemaNode
	methods  map[string]*schemaMethod
}

// apiSchema is the compiled Proxmox API schema: a path trie with per-method parameter checks.
type apiSchema struct {
	root    *schemaNode
	methods int
}

var (
	schemaOnce sync.Once
	schemaVal  *apiSchema
	schemaErr  error
)

// loadSchema parses and compiles the embedded schema once per process.
func loadSchema() (*apiSchema, error) {
	schemaOnce.Do(func() {
		schemaVal, schemaErr = compileSchema(apidocGz)
	})
	return schemaVal, schemaErr
}

// indexMax gives the highest index Proxmox accepts for an indexed key family
// (pve-container LXC/Config.pm, qemu-server QemuServer.pm and friends).
var indexMax = map[string]int{
	"mp": 255, "unused": 255, "dev": 255, "net": 31, "ipconfig": 31,
	"ide": 3, "sata": 5, "scsi": 30, "virtio": 15, "hostpci": 15, "usb": 13,
	"serial": 3, "parallel": 2, "numa": 7, "virtiofs": 9, "acmedomain": 4, "link": 7,
}

func (s *apiSchema) insert(path string) *schemaNode {
	n := s.root
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if seg == "" {
			continue
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if n.varNode == nil {
				n.varNode = &schemaNode{template: n.template + "/" + seg}
				n.varName = seg[1 : len(seg)-1]
			}
			n = n.varNode
			continue
		}
		if n.fixed == nil {
			n.fixed = map[string]*schemaNode{}
		}
		c := n.fixed[seg]
		if c == nil {
			c = &schemaNode{template: n.template + "/" + seg}
			n.fixed[seg] = c
		}
		n = c
	}
	return n
}

// lookup finds the node for a concrete path, filling the path variables.
// Like Proxmox's RESTHandler, a fixed segment wins, then a variable one.
func (s *apiSchema) lookup(path string, vars map[string]string) *schemaNode {
	return s.lookupSegments(strings.Split(path, "/"), vars)
}

// lookupSegments is lookup for an already split (and unescaped) path.
func (s *apiSchema) lookupSegments(segs []string, vars map[string]string) *schemaNode {
	n := s.root
	for _, seg := range segs {
		if seg == "" {
			continue
		}
		if c, ok := n.fixed[seg]; ok {
			n = c
			continue
		}
		if n.varNode != nil && !strings.ContainsAny(seg, " \t\n") {
			vars[n.varName] = seg
			n = n.varNode
			continue
		}
		return nil
	}
	return n
}

func rawString(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func rawNumber(m map[string]any, k string) *float64 {
	switch v := m[k].(type) {
	case float64:
		return &v
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return &f
		}
	}
	return nil
}

func rawBool(m map[string]any, k string) bool {
	switch v := m[k].(type) {
	case float64:
		return v != 0
	case bool:
		return v
	case string:
		return v == "1"
	}
	return false
}

// perlRegexToGo rewrites the few Perl-only spellings used in the schema's patterns.
func perlRegexToGo(p string) string {
	p = strings.ReplaceAll(p, "(?^:", "(?:")
	p = strings.ReplaceAll(p, "(?^i:", "(?i:")
	p = strings.ReplaceAll(p, "{,", "{0,")
	p = strings.ReplaceAll(p, `\0`, `\x00`)
	return p
}

func compileParam(name string, raw json.RawMessage) (*schemaParam, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return compileParamMap(name, m)
}

func compileSchema(gz []byte) (*apiSchema, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("open schema: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	var tree []apiNode
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	s := &apiSchema{root: &schemaNode{template: ""}}
	for i := range tree {
		if err := s.addTree(&tree[i]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addTree adds a node of the API tree, its methods and its children.
func (s *apiSchema) addTree(n *apiNode) error {
	node := s.insert(n.Path)
	for m, rawInfo := range n.Info {
		sm, err := compileMethod(n.Path, m, rawInfo)
		if err != nil {
			return err
		}
		if node.methods == nil {
			node.methods = map[string]*schemaMethod{}
		}
		node.methods[m] = sm
		s.methods++
	}
	for i := range n.Children {
		if err := s.addTree(&n.Children[i]); err != nil {
			return err
		}
	}
	return nil
}

// compileMethod compiles one method's parameters; name[n] parameters become indexed.
func compileMethod(path, m string, rawInfo json.RawMessage) (*schemaMethod, error) {
	var am apiMethod
	if err := json.Unmarshal(rawInfo, &am); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", m, path, err)
	}
	sm := &schemaMethod{template: path, method: m, props: map[string]*schemaParam{},
		indexed: map[string]*indexedParam{}, additional: -1, allowToken: am.AllowToken == nil || *am.AllowToken != 0}
	if ap := am.Parameters.AdditionalProperties; ap != nil {
		sm.additional = additionalProperties(*ap)
	}
	for name, pr := range am.Parameters.Properties {
		p, err := compileParam(name, pr)
		if err != nil {
			return nil, fmt.Errorf("%s %s param %s: %w", m, path, name, err)
		}
		if prefix, ok := strings.CutSuffix(name, "[n]"); ok {
			mx, ok := indexMax[prefix]
			if !ok {
				mx = 31
			}
			sm.indexed[prefix] = &indexedParam{prefix: prefix, max: mx, param: p}
			continue
		}
		sm.props[name] = p
		if !p.optional {
			sm.required = append(sm.required, name)
		}
	}
	sort.Strings(sm.required)
	return sm, nil
}

// additionalProperties reads a method's additionalProperties: 1 allowed, 0 refused, -1
// not said.
func additionalProperties(raw json.RawMessage) int {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return -1
	}
	switch x := v.(type) {
	case float64:
		return int(x)
	case bool:
		if x {
			return 1
		}
		return 0
	case map[string]any:
		return 1
	}
	return -1
}

func compileParamMap(name string, m map[string]any) (*schemaParam, error) {
	p := &schemaParam{name: name, typ: rawString(m, "type"), optional: rawBool(m, "optional"), minLen: -1, maxLen: -1,
		min: rawNumber(m, "minimum"), max: rawNumber(m, "maximum"), requires: rawString(m, "requires")}
	if _, ok := m["oneOf"]; ok {
		p.oneOf = true
	}
	if v := rawNumber(m, "minLength"); v != nil {
		p.minLen = int(*v)
	}
	if v := rawNumber(m, "maxLength"); v != nil {
		p.maxLen = int(*v)
	}
	p.enum = enumValues(m["enum"])
	if pat := rawString(m, "pattern"); pat != "" {
		p.patternSrc = pat
		re, err := regexp.Compile(`^(?:` + perlRegexToGo(pat) + `)$`)
		if err == nil {
			p.pattern = re
		}
	}
	switch f := m["format"].(type) {
	case string:
		p.format = f
	case map[string]any:
		if err := p.compileProps(f); err != nil {
			return nil, err
		}
	}
	if it, ok := m["items"].(map[string]any); ok {
		sp, err := compileParamMap(name, it)
		if err != nil {
			return nil, err
		}
		p.items = sp
	}
	return p, nil
}

func enumValues(raw any) []string {
	e, ok := raw.([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, x := range e {
		switch v := x.(type) {
		case string:
			out = append(out, v)
		case float64:
			out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	return out
}

// compileProps compiles the properties of a property-string format (net0, rootfs, ...).
func (p *schemaParam) compileProps(f map[string]any) error {
	p.props = map[string]*schemaParam{}
	for k, v := range f {
		sub, ok := v.(map[string]any)
		if !ok {
			continue
		}
		sp, err := compileParamMap(k, sub)
		if err != nil {
			return err
		}
		if rawBool(sub, "default_key") {
			p.defaultKey = k
		}
		alias := rawString(sub, "alias")
		if !sp.optional && alias == "" {
			p.required = append(p.required, k)
		}
		if alias != "" {
			if p.aliases == nil {
				p.aliases = map[string]string{}
			}
			p.aliases[k] = alias
		}
		if ka := rawString(sub, "keyAlias"); ka != "" {
			if p.keyAliases == nil {
				p.keyAliases = map[string]string{}
			}
			p.keyAliases[k] = ka
		}
		p.props[k] = sp
	}
	return nil
}
