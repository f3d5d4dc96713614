package i18n

import "sort"

// FieldErrors collects field validation failures, at most one per field, and turns them into
// one validation_failed problem with the fields in a stable order.
type FieldErrors struct {
	list []FieldError
	seen map[string]bool
}

// Add records a failure unless the field already has one.
func (v *FieldErrors) Add(field string, code FieldCode, param string) {
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	if v.seen[field] {
		return
	}
	v.seen[field] = true
	v.list = append(v.list, FieldError{Field: field, Code: code, Param: param})
}

// Has reports whether field already failed.
func (v *FieldErrors) Has(field string) bool { return v.seen[field] }

// Problem returns the 422 validation_failed problem, or nil when nothing failed.
func (v *FieldErrors) Problem() *Problem {
	if len(v.list) == 0 {
		return nil
	}
	out := append([]FieldError(nil), v.list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return Validation(out...)
}
