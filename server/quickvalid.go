package server

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The validator walks a struct by reflection and parses each tag's parameter on every call,
// several microseconds for a create body. quickValid checks the same tags from a plan compiled
// once per type, for the tags request bodies of strings and []strings use (required,
// omitempty, min, max, oneof, dive, serviceid, hostname_rfc1123). It only ever answers "valid":
// a body that fails any check, and any type using something else, goes to the validator, which
// produces the field errors as before. FuzzQuickValid checks that what it accepts the
// validator accepts.

type quickOp uint8

const (
	qRequired quickOp = iota
	qOmitEmpty
	qMin
	qMax
	qOneOf
	qServiceID
	qHostname
	qDive
)

type quickRule struct {
	op  quickOp
	n   int
	set []string
}

type quickField struct {
	index int
	slice bool
	rules []quickRule // on the field (for a slice up to dive)
	elem  []quickRule // on each element, after dive
}

// quickPlan is a type's compiled checks; ok is false when the type is left to the validator.
type quickPlan struct {
	ok     bool
	fields []quickField
}

var quickPlans sync.Map // reflect.Type -> *quickPlan

func quickPlanOf(t reflect.Type) *quickPlan {
	if v, ok := quickPlans.Load(t); ok {
		return v.(*quickPlan)
	}
	p := compileQuick(t)
	quickPlans.Store(t, p)
	return p
}

func compileQuick(t reflect.Type) *quickPlan {
	no := &quickPlan{}
	if t.Kind() != reflect.Struct {
		return no
	}
	p := &quickPlan{ok: true}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return no
		}
		if !f.IsExported() {
			continue
		}
		isString := f.Type.Kind() == reflect.String
		isSlice := f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String
		if !isString && !isSlice {
			return no
		}
		tag := f.Tag.Get("validate")
		if tag == "" || tag == "-" {
			continue
		}
		if strings.ContainsAny(tag, "|'") || strings.Contains(tag, "0x2C") || strings.Contains(tag, "0x7C") {
			return no
		}
		qf := quickField{index: i, slice: isSlice}
		dived := false
		for _, part := range strings.Split(tag, ",") {
			r, ok := compileRule(part)
			if !ok {
				return no
			}
			switch {
			case r.op == qDive:
				if !isSlice || dived {
					return no
				}
				dived = true
			case dived:
				if r.op == qOmitEmpty || r.op == qDive {
					return no
				}
				qf.elem = append(qf.elem, r)
			case isSlice && (r.op == qOneOf || r.op == qServiceID || r.op == qHostname):
				return no
			default:
				qf.rules = append(qf.rules, r)
			}
		}
		p.fields = append(p.fields, qf)
	}
	return p
}

func compileRule(part string) (quickRule, bool) {
	name, param, hasParam := strings.Cut(part, "=")
	var r quickRule
	switch name {
	case "required":
		r.op = qRequired
	case "omitempty":
		r.op = qOmitEmpty
	case "dive":
		r.op = qDive
	case "serviceid":
		r.op = qServiceID
	case "hostname_rfc1123":
		r.op = qHostname
	case "min", "max":
		n, err := strconv.Atoi(param)
		if !hasParam || err != nil || n < 0 || strconv.Itoa(n) != param {
			return r, false
		}
		r.op, r.n = qMin, n
		if name == "max" {
			r.op = qMax
		}
		return r, true
	case "oneof":
		r.op, r.set = qOneOf, strings.Fields(param)
		return r, hasParam && len(r.set) > 0
	default:
		return r, false
	}
	return r, !hasParam
}

// quickValid reports whether v (a pointer to a struct) passes its validate tags by the compiled
// plan. False means "ask the validator", not "invalid".
func quickValid(v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	p := quickPlanOf(rv.Type().Elem())
	if !p.ok {
		return false
	}
	sv := rv.Elem()
	for _, f := range p.fields {
		fv := sv.Field(f.index)
		if !f.slice {
			if !quickString(fv.String(), f.rules) {
				return false
			}
			continue
		}
		if !quickSlice(fv, f) {
			return false
		}
	}
	return true
}

func quickString(s string, rules []quickRule) bool {
	for _, r := range rules {
		switch r.op {
		case qRequired:
			if s == "" {
				return false
			}
		case qOmitEmpty:
			if s == "" {
				return true
			}
		case qMin:
			if utf8.RuneCountInString(s) < r.n {
				return false
			}
		case qMax:
			if utf8.RuneCountInString(s) > r.n {
				return false
			}
		case qOneOf:
			found := false
			for _, w := range r.set {
				if w == s {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		case qServiceID:
			if !validServiceID(s) {
				return false
			}
		case qHostname:
			if !hostnameRFC1123(s) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func quickSlice(fv reflect.Value, f quickField) bool {
	for _, r := range f.rules {
		switch r.op {
		case qRequired:
			if fv.IsNil() {
				return false
			}
		case qOmitEmpty:
			if fv.IsNil() {
				return true
			}
		case qMin:
			if fv.Len() < r.n {
				return false
			}
		case qMax:
			if fv.Len() > r.n {
				return false
			}
		default:
			return false
		}
	}
	if f.elem == nil {
		return true
	}
	for i := range fv.Len() {
		if !quickString(fv.Index(i).String(), f.elem) {
			return false
		}
	}
	return true
}
