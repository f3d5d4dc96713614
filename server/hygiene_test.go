package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics and parses it.
func scrape(t *testing.T, h *harness) map[string]*familyView {
	t.Helper()
	req, _ := http.NewRequest("GET", h.http.URL+"/metrics", nil)
	r := h.do(req)
	if r.Status != 200 {
		t.Fatalf("scrape: %d", r.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	out := map[string]*familyView{}
	for name, f := range fams {
		fv := &familyView{}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			fv.series = append(fv.series, labels)
			fv.values = append(fv.values, m.GetGauge().GetValue())
			for _, b := range m.GetHistogram().GetBucket() {
				fv.buckets = append(fv.buckets, b.GetUpperBound())
			}
		}
		out[name] = fv
	}
	return out
}

type familyView struct {
	series  []map[string]string
	values  []float64 // gauges
	buckets []float64 // histogram upper bounds, of every series
}

func seriesCount(fams map[string]*familyView) int {
	n := 0
	for _, f := range fams {
		n += len(f.series)
	}
	return n
}

func randomMethod(r *rand.Rand) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, 3+r.IntN(12))
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// R49: no request adds a series. 300 requests with random methods, on unknown paths and on
// known ones, leave the scrape's series count where it was; unknown methods and routes fold
// into "other" and "unmatched".
func TestMetricsLabelsFromClosedSets(t *testing.T) {
	h := newHarness(t, "sqlite")
	send := func(method, path string) {
		req, err := http.NewRequest(method, h.http.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.do(req)
	}
	// Every series the flood can reach exists once before the count.
	send("BREW", "/nowhere")
	send("BREW", "/healthz")
	send("GET", "/healthz")
	scrape(t, h)
	before := scrape(t, h)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		path := fmt.Sprintf("/x/%d/%s", i, randomMethod(rnd))
		if i%2 == 1 {
			path = "/healthz"
		}
		send(randomMethod(rnd), path)
	}
	after := scrape(t, h)
	if b, a := seriesCount(before), seriesCount(after); a != b {
		t.Fatalf("series count %d before 300 random methods, %d after", b, a)
	}
	seen := map[string]bool{}
	for _, l := range after["pvebill_http_requests_total"].series {
		seen[l["method"]+" "+l["route"]] = true
	}
	for _, want := range []string{"other unmatched", "GET /healthz", "GET /metrics"} {
		if !seen[want] {
			t.Errorf("no series %q in %v", want, seen)
		}
	}
}

// R49: the access line of an unmatched route carries the folded method, never the raw one.
func TestAccessLogFoldsUnknownMethod(t *testing.T) {
	h := newHarness(t, "sqlite")
	method := "X" + strings.Repeat("LONGMETHOD", 1000)
	req, _ := http.NewRequest(method, h.http.URL+"/nowhere", nil)
	if r := h.do(req); r.Status != 404 {
		t.Fatalf("status %d", r.Status)
	}
	if strings.Contains(h.logs.String(), "LONGMETHOD") {
		t.Fatal("the raw method is in the log")
	}
	line := requestLine(t, h, "(unmatched)")
	if line["method"] != "other" {
		t.Fatalf("access line %v", line)
	}
}

// requestLine returns the last access line logged for route.
func requestLine(t *testing.T, h *harness, route string) map[string]any {
	t.Helper()
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(h.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "request" && m["route"] == route {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("no access line for %s in\n%s", route, h.logs.String())
	}
	return last
}

// Probes and scrapes are logged at debug; API requests at info.
func TestProbeAndScrapeLinesAtDebug(t *testing.T) {
	h := newHarness(t, "sqlite")
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		req, _ := http.NewRequest("GET", h.http.URL+p, nil)
		h.do(req)
		if l := requestLine(t, h, p); l["level"] != "DEBUG" {
			t.Errorf("%s logged at %v", p, l["level"])
		}
	}
	h.billing("GET", "/v1/operations/00000000-0000-4000-8000-000000000001", nil)
	if l := requestLine(t, h, "/v1/operations/:id"); l["level"] != "INFO" {
		t.Errorf("API request logged at %v", l["level"])
	}
}

// A 401 names its scheme in WWW-Authenticate (RFC 9110 §11.6.1), on the signed routes and on
// a protected /metrics.
func TestUnauthorizedCarriesChallenge(t *testing.T) {
	h := newHarnessWith(t, "sqlite", func(o *harnessOpts) { o.metricsToken = "scrape-token-123" })
	req, _ := http.NewRequest("GET", h.http.URL+"/v1/plans", nil)
	r := h.do(req)
	checkProblem(t, r, 401, "signature_invalid")
	if c := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Pvebill-HMAC-SHA256 ") {
		t.Errorf("signed route challenge %q", c)
	}
	r = h.signed("GET", "/v1/plans", "shop", "wrong-secret", nil)
	if c := r.Header.Get("WWW-Authenticate"); r.Status != 401 || !strings.HasPrefix(c, "Pvebill-HMAC-SHA256 ") {
		t.Errorf("wrong signature: %d, challenge %q", r.Status, c)
	}
	req, _ = http.NewRequest("GET", h.http.URL+"/metrics", nil)
	r = h.do(req)
	checkProblem(t, r, 401, "signature_invalid")
	if c := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Bearer ") {
		t.Errorf("metrics challenge %q", c)
	}
	if r := h.signed("GET", "/v1/plans", "shop", shopSecret, nil); r.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("challenge on a %d", r.Status)
	}
}

// HEAD answers every GET route with GET's status and headers and no body.
func TestHeadMirrorsGet(t *testing.T) {
	h := newHarness(t, "sqlite")
	unsigned := func(method, path string) response {
		req, _ := http.NewRequest(method, h.http.URL+path, nil)
		return h.do(req)
	}
	type call func(method string) response
	calls := map[string]call{
		"/healthz":      func(m string) response { return unsigned(m, "/healthz") },
		"/readyz":       func(m string) response { return unsigned(m, "/readyz") },
		"/openapi.yaml": func(m string) response { return unsigned(m, "/openapi.yaml") },
		"/v1/plans":     func(m string) response { return h.shop(m, "/v1/plans", nil) },
		"/v1/operations/:id (404)": func(m string) response {
			return h.billing(m, "/v1/operations/00000000-0000-4000-8000-000000000001", nil)
		},
		"/v1/plans unsigned (401)": func(m string) response { return unsigned(m, "/v1/plans") },
	}
	for name, do := range calls {
		g, hd := do("GET"), do("HEAD")
		if g.Status != hd.Status || len(hd.Body) != 0 {
			t.Errorf("%s: GET %d, HEAD %d with %d body bytes", name, g.Status, hd.Status, len(hd.Body))
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Content-Language", "WWW-Authenticate"} {
			if g.Header.Get(k) != hd.Header.Get(k) {
				t.Errorf("%s: %s GET %q, HEAD %q", name, k, g.Header.Get(k), hd.Header.Get(k))
			}
		}
	}
}

// pvebill_build_info is 1 with the version and Go version; the latency buckets reach past the
// 60 s long-poll.
func TestBuildInfoAndLatencyBuckets(t *testing.T) {
	h := newHarness(t, "sqlite")
	h.billing("GET", "/v1/operations/00000000-0000-4000-8000-000000000001?wait=0", nil)
	fams := scrape(t, h)
	bi := fams["pvebill_build_info"]
	if bi == nil || len(bi.series) != 1 || bi.values[0] != 1 {
		t.Fatalf("pvebill_build_info: %+v", bi)
	}
	if l := bi.series[0]; l["goversion"] != runtime.Version() || l["version"] == "" {
		t.Errorf("build info labels %v", l)
	}
	d := fams["pvebill_http_request_duration_seconds"]
	if d == nil {
		t.Fatal("no latency histogram")
	}
	top := 0.0
	for _, b := range d.buckets {
		top = max(top, b)
	}
	if top <= 60 {
		t.Fatalf("largest latency bucket %v s, not past the 60 s long-poll", top)
	}
}
