package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
)

// fieldErrors returns the (field, code) pairs of a 422 validation_failed answer, each message
// checked to name its field.
func fieldErrors(t *testing.T, r response) map[string]string {
	t.Helper()
	m := checkProblem(t, r, 422, "validation_failed")
	out := map[string]string{}
	list, _ := m["errors"].([]any)
	for _, e := range list {
		fe := e.(map[string]any)
		field, _ := fe["field"].(string)
		if msg, _ := fe["message"].(string); !strings.Contains(msg, field) {
			t.Errorf("message %q does not name %q", msg, field)
		}
		out[field], _ = fe["code"].(string)
	}
	return out
}

// A create body whose text is changed on its way in is refused, the field named: text that is
// not UTF-8 (never replaced by U+FFFD), a member given twice (never "the last one wins") and a
// member name in another case (never matched to a field); a lone surrogate escape is no text at
// all. Nothing is created.
func TestCreateBodyIsTakenAsWrittenOrRefused(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	const rest = `"plan":"ct-1g","hostname":"web1.example.com","os":"debian-12"`
	cases := []struct {
		name, body, field, code string
	}{
		{"invalid UTF-8", `{"service_id":"strict-1",` + rest + `,"root_password":"Secr` + "\xff" + `et-pw-1"}`, "root_password", "not_utf8"},
		{"repeated member", `{"service_id":"strict-2",` + rest + `,"root_password":"Secret-pw-1","service_id":"strict-3"}`,
			"service_id", "repeated_field"},
		{"member in another case", `{"Service_ID":"strict-4",` + rest + `,"root_password":"Secret-pw-1"}`, "Service_ID", "unknown_field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.billing("POST", "/v1/services", []byte(c.body), withHeader("Accept-Language", "de"))
			if got := fieldErrors(t, r); got[c.field] != c.code {
				t.Fatalf("field errors %v, want %s: %s", got, c.field, c.code)
			}
			if r.Header.Get("Content-Language") != "de" {
				t.Fatalf("Content-Language %q", r.Header.Get("Content-Language"))
			}
		})
	}
	// A lone surrogate escape names no character: the body is not JSON text pvebill takes.
	body := `{"service_id":"strict-5",` + rest + `,"root_password":"Secret-\ud800-pw"}`
	checkProblem(t, h.billing("POST", "/v1/services", []byte(body)), 400, "malformed_json")
	if n := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM services"); n != 0 {
		t.Fatalf("%d services created", n)
	}
}

// A ";" in the query string is no separator and no parameter is dropped in silence: the
// request is refused naming the parameter, also where unknown parameters are refused.
func TestQuerySemicolonRefused(t *testing.T) {
	h := newHarness(t, "sqlite")
	to := time.Now().UTC().Truncate(time.Hour)
	from := to.Add(-24 * time.Hour)
	base := "/v1/usage?from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339))
	if r := h.billing("GET", base, nil); r.Status != 200 {
		t.Fatalf("plain query: %d %s", r.Status, r.Body)
	}
	for path, field := range map[string]string{
		base + "&granularity=5m;bogus=1": "granularity",
		base + ";bogus=1":                "to",
		base + "&bo%zzgus=1":             "bo%zzgus",
		"/v1/operations/00000000-0000-4000-8000-000000000000?wait=1;x": "wait",
	} {
		if got := fieldErrors(t, h.billing("GET", path, nil)); got[field] != "bad_format" {
			t.Errorf("%s: field errors %v, want %s: bad_format", path, got, field)
		}
	}
}
