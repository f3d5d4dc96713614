package server

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/modules/validation"
)

// bindQuery reads the query parameters dst's json tags name into its fields and checks them
// with the one validator (R37): a string as it is, a whole number (int or *int, absent: left
// as it was), a time in RFC 3339. A value that is not of its field's type is that field's error
// (the rules are then not run on it); the others are the validator's, mapped as a body's are.
func bindQuery(c *gin.Context, dst any) []i18n.FieldError {
	rv := reflect.ValueOf(dst).Elem()
	rt := rv.Type()
	var fields []i18n.FieldError
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		raw, ok := c.GetQuery(name)
		if name == "" || name == "-" || !ok {
			continue
		}
		if fe, bad := setQueryField(rv.Field(i), name, raw); bad {
			fields = append(fields, fe)
		}
	}
	if len(fields) > 0 {
		return fields
	}
	out, err := validation.Struct(dst)
	if err != nil {
		panic(err) // a query struct is a struct: a wiring mistake
	}
	return out
}

var timeType = reflect.TypeOf(time.Time{})

// setQueryField sets one field from its raw value; bad reports a value of the wrong type.
func setQueryField(f reflect.Value, name, raw string) (i18n.FieldError, bool) {
	switch {
	case f.Type() == timeType:
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return i18n.FieldError{Field: name, Code: i18n.FieldBadTimestamp}, true
		}
		f.Set(reflect.ValueOf(t))
	case f.Kind() == reflect.String:
		f.SetString(raw)
	case f.Kind() == reflect.Int, f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Int:
		n, err := strconv.ParseInt(raw, 10, 0)
		if err != nil {
			return i18n.FieldError{Field: name, Code: i18n.FieldType, Param: "int"}, true
		}
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
			f = f.Elem()
		}
		f.SetInt(n)
	default:
		panic("bindQuery: field " + name + " of an unsupported type " + f.Type().String())
	}
	return i18n.FieldError{}, false
}

// waitQuery is ?wait=N: whole seconds to long-poll an operation, 0 to 60.
type waitQuery struct {
	Wait *int `json:"wait" validate:"omitnil,min=0,max=60"`
}

// limitQuery is ?limit=N of a paged list; its most is the list's own (pageLimit).
type limitQuery struct {
	Limit *int `json:"limit" validate:"omitnil,min=1"`
}
