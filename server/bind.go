package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/go-playground/validator/v10"

	"pvebill/i18n"
)

// validate is the one validator instance; field names come from json tags.
var validate = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
		if name == "-" {
			return ""
		}
		return name
	})
	_ = v.RegisterValidation("serviceid", func(fl validator.FieldLevel) bool {
		return validServiceID(fl.Field().String())
	})
	// The validator's own hostname_rfc1123 runs a regular expression; this is the same
	// language checked byte by byte (see hostnameRFC1123).
	_ = v.RegisterValidation("hostname_rfc1123", func(fl validator.FieldLevel) bool {
		return hostnameRFC1123(fl.Field().String())
	})
	return v
}

// ServiceIDPattern is the shape of a service id (API.md Create). validServiceID checks the
// same shape without a regular expression.
var ServiceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// validServiceID reports whether s matches ServiceIDPattern.
func validServiceID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !isAlnum(b) && b != '.' && b != '_' && b != ':' && b != '-' {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// hostnameRFC1123 reports whether s is an RFC 1123 host name as the validator's
// hostname_rfc1123 defines it (^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$):
// dot-separated labels of 1 to 63 letters, digits and hyphens that neither start nor end
// with a hyphen.
func hostnameRFC1123(s string) bool {
	if len(s) == 0 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if b := s[i]; !isAlnum(b) && b != '-' {
				return false
			}
			continue
		}
		label := s[start:i]
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		start = i + 1
	}
	return true
}

// bindJSON decodes the raw request body strictly (unknown fields refused, one JSON value only)
// into v and validates it. Every failure is a typed Problem.
func bindJSON(c *gin.Context, v any) error {
	ct := c.GetHeader("Content-Type")
	if ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return i18n.NewProblem(415, i18n.CodeUnsupportedMediaType)
		}
	}
	return DecodeBody(rawBody(c), v)
}

// DecodeBody decodes a JSON request body strictly (unknown fields refused, one JSON value only)
// into v and validates it: what every handler's binding does once the media type is accepted.
// Every failure is a typed Problem.
func DecodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return i18n.NewProblem(400, i18n.CodeMalformedJSON)
	}
	if decodePlain(body, v) {
		return validateStruct(v)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeProblem(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return i18n.NewProblem(400, i18n.CodeMalformedJSON)
	}
	return validateStruct(v)
}

func decodeProblem(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(body)"
		}
		return i18n.Validation(i18n.FieldError{Field: field, Code: i18n.FieldType, Param: typeErr.Type.String()})
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return i18n.NewProblem(400, i18n.CodeMalformedJSON)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return i18n.Validation(i18n.FieldError{Field: name, Code: i18n.FieldUnknown})
	}
	return i18n.NewProblem(400, i18n.CodeMalformedJSON).Wrap(err)
}

// validateStruct runs the validator and maps its errors to field errors.
func validateStruct(v any) error {
	if quickValid(v) {
		return nil
	}
	err := validate.Struct(v)
	if err == nil {
		return nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return i18n.NewProblem(400, i18n.CodeMalformedJSON).Wrap(err)
	}
	fields := make([]i18n.FieldError, 0, len(ves))
	for _, fe := range ves {
		fields = append(fields, fieldError(fe))
	}
	return i18n.Validation(fields...)
}

func fieldError(fe validator.FieldError) i18n.FieldError {
	ns := fe.Namespace()
	if dot := strings.IndexByte(ns, '.'); dot >= 0 {
		ns = ns[dot+1:]
	}
	f := i18n.FieldError{Field: ns, Param: fe.Param()}
	isString := fe.Kind() == reflect.String
	isCollection := fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map
	switch fe.Tag() {
	case "required", "required_if", "required_unless":
		f.Code = i18n.FieldRequired
	case "required_without", "required_without_all":
		f.Code, f.Param = i18n.FieldRequiredOne, fmt.Sprintf("%s, %s", fe.Field(), fe.Param())
	case "min", "gte":
		f.Code = i18n.FieldTooSmall
		if isString || isCollection {
			f.Code = i18n.FieldTooShort
		}
	case "max", "lte":
		f.Code = i18n.FieldTooLarge
		if isString || isCollection {
			f.Code = i18n.FieldTooLong
		}
	case "oneof":
		f.Code, f.Param = i18n.FieldOneOf, strings.ReplaceAll(fe.Param(), " ", ", ")
	case "unique":
		f.Code = i18n.FieldDuplicate
	case "datetime":
		f.Code = i18n.FieldBadTimestamp
	default:
		f.Code = i18n.FieldPattern
	}
	return f
}
