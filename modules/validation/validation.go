// Package validation holds pvebill's one validator (go-playground/validator) and the one mapping
// of its rules to the API's field codes, so that a request body, a query string and a plan from
// plans_file are refused in the same words (R37).
package validation

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/go-playground/validator/v10"

	"pvebill/i18n"
)

// IDPattern is the shape of a service id, a client id and a request id: the `serviceid` rule.
var IDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// validate is the one instance; field names are the json names, as the API spells them.
var validate = func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name := strings.SplitN(f.Tag.Get("json"), ",", 2)[0]
		if name == "-" {
			return ""
		}
		return name
	})
	if err := v.RegisterValidation("serviceid", func(fl validator.FieldLevel) bool {
		return IDPattern.MatchString(fl.Field().String())
	}); err != nil {
		panic(err)
	}
	return v
}()

// ErrNotAStruct is a value the validator cannot check (a wiring mistake, not bad input).
var ErrNotAStruct = errors.New("validation: not a struct")

// Struct checks v's validate tags and returns every failure as a field error (none: nil).
func Struct(v any) ([]i18n.FieldError, error) {
	err := validate.Struct(v)
	if err == nil {
		return nil, nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return nil, fmt.Errorf("%w: %w", ErrNotAStruct, err)
	}
	out := make([]i18n.FieldError, 0, len(ves))
	for _, fe := range ves {
		out = append(out, fieldError(fe))
	}
	return out, nil
}

// fieldError maps one rule's failure to its field code: the field's path without the struct's
// own name, and the rule's parameter where the message names it.
func fieldError(fe validator.FieldError) i18n.FieldError {
	ns := fe.Namespace()
	if dot := strings.IndexByte(ns, '.'); dot >= 0 {
		ns = ns[dot+1:]
	}
	f := i18n.FieldError{Field: ns, Param: fe.Param()}
	sized := fe.Kind() == reflect.String || fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map
	switch fe.Tag() {
	case "required", "required_if", "required_unless":
		f.Code = i18n.FieldRequired
	case "required_without", "required_without_all":
		f.Code, f.Param = i18n.FieldRequiredOne, fmt.Sprintf("%s, %s", fe.Field(), fe.Param())
	case "min", "gte":
		f.Code = i18n.FieldTooSmall
		if sized {
			f.Code = i18n.FieldTooShort
		}
	case "max", "lte":
		f.Code = i18n.FieldTooLarge
		if sized {
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
