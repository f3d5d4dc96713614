package server

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// The usual request body is a flat JSON object of strings and arrays of strings (a create is
// seven of them). decodePlain decodes exactly that shape straight into the target struct, which
// costs a fraction of encoding/json's reflection walk; anything else it declines, and bindJSON
// decodes with encoding/json as before, so every error and every corner case (escapes, null,
// numbers, case-insensitive names, unknown or repeated members, trailing data) keeps
// encoding/json's behaviour. FuzzDecodePlain checks the two agree.

// maxPlainFields bounds the fields of a type decodePlain takes.
const maxPlainFields = 16

// plainField is a field decodePlain can fill.
type plainField struct {
	name  string
	index int
	slice bool // []string, else string
}

// plainType is the decoding plan of a struct type; nil fields mean the type is not eligible.
type plainType struct {
	fields []plainField
}

var plainTypes sync.Map // reflect.Type -> *plainType

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// plainTypeOf returns the plan of t: eligible when every exported field is a string or a
// []string (of no type with its own unmarshalling) with a distinct plain name, at most
// maxPlainFields (request bodies have a handful; the values are gathered on the stack).
func plainTypeOf(t reflect.Type) *plainType {
	if v, ok := plainTypes.Load(t); ok {
		return v.(*plainType)
	}
	pt := &plainType{}
	if fields, ok := plainFields(t); ok {
		pt.fields = fields
	}
	plainTypes.Store(t, pt)
	return pt
}

func plainFields(t reflect.Type) ([]plainField, bool) {
	if t.Kind() != reflect.Struct || customUnmarshal(t) {
		return nil, false
	}
	var fields []plainField
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil, false
			}
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) || seen[name] {
			return nil, false
		}
		seen[name] = true
		pf := plainField{name: name, index: i}
		switch {
		case f.Type.Kind() == reflect.String && !customUnmarshal(f.Type):
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String &&
			!customUnmarshal(f.Type) && !customUnmarshal(f.Type.Elem()):
			pf.slice = true
		default:
			return nil, false
		}
		fields = append(fields, pf)
	}
	if len(fields) == 0 || len(fields) > maxPlainFields {
		return nil, false
	}
	return fields, true
}

func customUnmarshal(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		p.Implements(jsonUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// plainName: a member name decodePlain matches (printable ASCII, no quote or backslash).
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// decodePlain decodes data into v (a pointer to a struct) when data is one JSON object whose
// members all name a field exactly, once each, with a string (or, for a []string field, an
// array of strings) free of escapes, followed by nothing but white space. It reports whether
// it did; when it did not, v is untouched.
func decodePlain(data []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	pt := plainTypeOf(rv.Type().Elem())
	if pt.fields == nil {
		return false
	}
	var vals [maxPlainFields]plainValue
	var present uint32
	p := plainParser{data: data}
	p.ws()
	if !p.byte('{') {
		return false
	}
	p.ws()
	if !p.byte('}') {
		for {
			key, ok := p.raw()
			if !ok {
				return false
			}
			fi := -1
			for i := range pt.fields {
				if pt.fields[i].name == string(key) {
					fi = i
					break
				}
			}
			if fi < 0 || present&(1<<fi) != 0 {
				return false
			}
			present |= 1 << fi
			p.ws()
			if !p.byte(':') {
				return false
			}
			p.ws()
			if pt.fields[fi].slice {
				list, ok := p.strArray()
				if !ok {
					return false
				}
				vals[fi].list = list
			} else {
				s, ok := p.str()
				if !ok {
					return false
				}
				vals[fi].s = s
			}
			p.ws()
			if p.byte('}') {
				break
			}
			if !p.byte(',') {
				return false
			}
			p.ws()
		}
	}
	p.ws()
	if p.i != len(p.data) {
		return false
	}
	dst := rv.Elem()
	for i, f := range pt.fields {
		if present&(1<<i) == 0 {
			continue
		}
		fv := dst.Field(f.index)
		if f.slice {
			sv := reflect.MakeSlice(fv.Type(), len(vals[i].list), len(vals[i].list))
			for j, s := range vals[i].list {
				sv.Index(j).SetString(s)
			}
			fv.Set(sv)
		} else {
			fv.SetString(vals[i].s)
		}
	}
	return true
}

type plainValue struct {
	s    string
	list []string
}

type plainParser struct {
	data []byte
	i    int
}

func (p *plainParser) ws() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *plainParser) byte(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters whose bytes are valid UTF-8 (what
// encoding/json takes over unchanged).
func (p *plainParser) str() (string, bool) {
	raw, ok := p.raw()
	return string(raw), ok
}

// raw reads such a string and returns its bytes between the quotes.
func (p *plainParser) raw() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.data); p.i++ {
		c := p.data[p.i]
		switch {
		case c == '"':
			raw := p.data[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(raw) {
				return nil, false
			}
			return raw, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (p *plainParser) strArray() ([]string, bool) {
	if !p.byte('[') {
		return nil, false
	}
	p.ws()
	list := []string{}
	if p.byte(']') {
		return list, true
	}
	for {
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		list = append(list, s)
		p.ws()
		if p.byte(']') {
			return list, true
		}
		if !p.byte(',') {
			return nil, false
		}
		p.ws()
	}
}
