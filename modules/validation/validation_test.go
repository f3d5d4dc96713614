package validation_test

import (
	"testing"

	"pvebill/i18n"
	"pvebill/modules/validation"
)

type sample struct {
	ID    string   `json:"service_id" validate:"required,serviceid"`
	Count int      `json:"count" validate:"min=1,max=10"`
	Name  string   `json:"name" validate:"max=3"`
	Tags  []string `json:"tags" validate:"min=1"`
	Mode  string   `json:"mode" validate:"omitempty,oneof=stop pause"`
	Inner struct {
		Size int `json:"size" validate:"gte=2"`
	} `json:"inner"`
}

// R37: the one mapping of the validator's rules to field codes, named by json paths, that the
// HTTP layer and plans_file share.
func TestStructMapsRulesToFieldCodes(t *testing.T) {
	s := sample{ID: "a/b", Count: 11, Name: "long", Mode: "spin"}
	got, err := validation.Struct(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]i18n.FieldError{
		"service_id": {Field: "service_id", Code: i18n.FieldPattern, Param: ""},
		"count":      {Field: "count", Code: i18n.FieldTooLarge, Param: "10"},
		"name":       {Field: "name", Code: i18n.FieldTooLong, Param: "3"},
		"tags":       {Field: "tags", Code: i18n.FieldTooShort, Param: "1"},
		"mode":       {Field: "mode", Code: i18n.FieldOneOf, Param: "stop, pause"},
		"inner.size": {Field: "inner.size", Code: i18n.FieldTooSmall, Param: "2"},
	}
	if len(got) != len(want) {
		t.Fatalf("fields %+v", got)
	}
	for _, f := range got {
		if want[f.Field] != f {
			t.Errorf("%s: %+v, want %+v", f.Field, f, want[f.Field])
		}
	}
	if got, err := validation.Struct(sample{ID: "ok-1", Count: 1, Tags: []string{"x"}, Inner: struct {
		Size int `json:"size" validate:"gte=2"`
	}{Size: 2}}); err != nil || len(got) != 0 {
		t.Errorf("a valid value: %v %v", got, err)
	}
	if _, err := validation.Struct(42); err == nil {
		t.Error("a number was validated as a struct")
	}
}
