package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// R49: /metrics is parsed; HTTP series are labelled by route template, never by raw path.
func TestHTTPMetricsUseRouteTemplates(t *testing.T) {
	h := newHarness(t, "sqlite")
	for i := 0; i < 3; i++ {
		h.billing("GET", "/v1/operations/00000000-0000-4000-8000-00000000000"+string(rune('1'+i)), nil)
	}
	h.billing("GET", "/v1/raw/path/nobody/knows", nil)
	req, _ := http.NewRequest("GET", h.http.URL+"/metrics", nil)
	r := h.do(req)
	if r.Status != 200 {
		t.Fatal(r.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	reqs := fams["pvebill_http_requests_total"]
	if reqs == nil || fams["pvebill_http_request_duration_seconds"] == nil {
		t.Fatalf("missing HTTP metrics: %v", keys(fams))
	}
	var found bool
	for _, m := range reqs.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if strings.Contains(labels["route"], "0000") || strings.Contains(labels["route"], "nobody") {
			t.Errorf("raw path in route label: %q", labels["route"])
		}
		if labels["route"] == "/v1/operations/:id" && labels["code"] == "404" && labels["method"] == "GET" {
			found = m.GetCounter().GetValue() == 3
		}
	}
	if !found {
		t.Fatalf("no pvebill_http_requests_total{route=/v1/operations/:id,code=404} = 3 in\n%s", r.Body)
	}
}

// /metrics can be protected by a bearer token.
func TestMetricsBearerToken(t *testing.T) {
	h := newHarnessWith(t, "sqlite", func(o *harnessOpts) { o.metricsToken = "scrape-token-123" })
	req, _ := http.NewRequest("GET", h.http.URL+"/metrics", nil)
	checkProblem(t, h.do(req), 401, "signature_invalid")
	req.Header.Set("Authorization", "Bearer scrape-token-123")
	if r := h.do(req); r.Status != 200 {
		t.Fatal(r.Status)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
