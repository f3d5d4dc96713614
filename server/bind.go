package server

import (
	"bytes"
	"errors"
	"mime"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"pvebill/i18n"
	"pvebill/modules/validation"
	"pvebill/server/config"
)

// serviceIDPattern is the shape of a service id (the create body's service_id), also taken by
// request ids, client ids (validated at config load) and the parts of usage cursors.
var serviceIDPattern = config.IDPattern

// decodeOptions make the JSON decoding strict: member names match their field exactly (case
// included), a member named twice, a member no field has and text that is not UTF-8 are
// refused rather than silently resolved.
var decodeOptions = json.JoinOptions(
	json.RejectUnknownMembers(true),
	json.MatchCaseInsensitiveNames(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// errInvalidUTF8 is the decoder's own error for text that is not UTF-8 (the module does not
// export it), taken once from a decode of such text.
var errInvalidUTF8 = func() error {
	var s string
	var se *jsontext.SyntacticError
	if err := json.Unmarshal([]byte("\"\xff\""), &s, decodeOptions); errors.As(err, &se) {
		return se.Err
	}
	panic("json: invalid UTF-8 decoded without an error")
}()

// bindJSON decodes the raw request body strictly (see decodeOptions; one JSON value only) into
// v and validates it. Every failure is a typed Problem.
func bindJSON(c *gin.Context, v any) error {
	ct := c.GetHeader("Content-Type")
	if ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return i18n.NewProblem(415, i18n.CodeUnsupportedMediaType)
		}
	}
	return decodeBody(rawBody(c), v)
}

// decodeBody decodes a JSON request body strictly into v and validates it: what every
// handler's binding does once the media type is accepted. Every failure is a typed Problem.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return i18n.NewProblem(400, i18n.CodeMalformedJSON)
	}
	if err := json.Unmarshal(body, v, decodeOptions); err != nil {
		return decodeProblem(reflect.TypeOf(v), err)
	}
	return validateStruct(v)
}

// decodeProblem maps a decoding error to a problem: 422 naming the field for a value of the
// wrong type, an unknown or repeated member and text that is not UTF-8; 400 malformed_json for
// anything else that is not JSON.
func decodeProblem(t reflect.Type, err error) error {
	var semErr *json.SemanticError
	var synErr *jsontext.SyntacticError
	switch {
	case errors.As(err, &semErr):
		field := pointerField(t, semErr.JSONPointer)
		if errors.Is(semErr.Err, json.ErrUnknownName) {
			return i18n.Validation(i18n.FieldError{Field: field, Code: i18n.FieldUnknown})
		}
		param := ""
		if semErr.GoType != nil {
			param = semErr.GoType.String()
		}
		return i18n.Validation(i18n.FieldError{Field: field, Code: i18n.FieldType, Param: param})
	case errors.As(err, &synErr) && errors.Is(synErr.Err, jsontext.ErrDuplicateName):
		return i18n.Validation(i18n.FieldError{Field: pointerField(t, synErr.JSONPointer), Code: i18n.FieldRepeated})
	case errors.As(err, &synErr) && errors.Is(synErr.Err, errInvalidUTF8):
		return i18n.Validation(i18n.FieldError{Field: pointerField(t, synErr.JSONPointer), Code: i18n.FieldNotUTF8})
	}
	return i18n.NewProblem(400, i18n.CodeMalformedJSON).Wrap(err)
}

// pointerField names the member a JSON pointer into a value of type t points at as
// encoding/json did: the struct fields on the way joined by dots ("os.container"), map keys and
// array indices left out; "(body)" for the whole body.
func pointerField(t reflect.Type, p jsontext.Pointer) string {
	var names []string
	for tok := range p.Tokens() {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Array:
			t = t.Elem()
		case reflect.Struct:
			names = append(names, tok)
			f, ok := jsonField(t, tok)
			if !ok {
				return strings.Join(names, ".")
			}
			t = f.Type
		default:
			return pathOrBody(names)
		}
	}
	return pathOrBody(names)
}

func pathOrBody(names []string) string {
	if len(names) == 0 {
		return "(body)"
	}
	return strings.Join(names, ".")
}

// jsonField finds the field of struct type t that JSON member name decodes into.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Tag.Get("json") == "") {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || (tag == "" && f.Name == name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// validateStruct runs the validator and maps its errors to field errors.
func validateStruct(v any) error {
	fields, err := validation.Struct(v)
	if err != nil {
		return i18n.NewProblem(400, i18n.CodeMalformedJSON).Wrap(err)
	}
	if len(fields) > 0 {
		return i18n.Validation(fields...)
	}
	return nil
}
