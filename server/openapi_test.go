package server_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"pvebill/models"
	"pvebill/modules/ippool"
)

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	return doc
}

// allowTestAction adds the harness's test-only action to the operation's action enum of doc, for
// the tests whose probe operations run it (the product's enum rightly does not list it).
func allowTestAction(doc *openapi3.T) *openapi3.T {
	action := doc.Components.Schemas["Operation"].Value.Properties["action"].Value
	action.Enum = append(action.Enum, "test")
	return doc
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z_]+)`)

// upgradeRoutes are the WebSocket routes: a HEAD cannot upgrade, and must not use the token.
var upgradeRoutes = []string{"/console/{token}/ws", "/agent/v1/connect", "/agent/v1/forward/{path}"}

// Every route in the gin table is in openapi.yaml with the same method, and vice versa.
func TestRouteTableMatchesOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	h := newHarness(t, "sqlite")
	got := map[string]bool{}
	var heads []string
	for _, r := range h.srv.Engine().Routes() {
		if strings.HasPrefix(r.Path, "/v1/_test/") {
			continue // test-only routes added by the harness
		}
		path := ginParam.ReplaceAllString(r.Path, "{$1}")
		if r.Method == http.MethodHead {
			heads = append(heads, path)
			continue
		}
		got[r.Method+" "+path] = true
	}
	// HEAD is implied by GET (RFC 9110 §9.3.2) and not listed in openapi.yaml: each HEAD route
	// must be a GET route's twin, and each GET route has one.
	for _, path := range heads {
		if !got["GET "+path] {
			t.Errorf("HEAD %s without a GET route", path)
		}
	}
	for k := range got {
		if path, ok := strings.CutPrefix(k, "GET "); ok && !slices.Contains(heads, path) && !slices.Contains(upgradeRoutes, path) {
			t.Errorf("GET %s answers no HEAD", path)
		}
	}
	want := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			want[method+" "+path] = true
		}
	}
	var missing, extra []string
	for k := range got {
		if !want[k] {
			missing = append(missing, k)
		}
	}
	for k := range want {
		if !got[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes not in openapi.yaml: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("openapi.yaml paths with no route: %v", extra)
	}
}

// Real responses validate against the spec.
func TestResponsesConformToOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	allowTestAction(doc)
	h := newHarness(t, "sqlite")
	r := h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-spec", ""))
	opID := r.json(t)["operation"].(map[string]any)["id"].(string)
	r = h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-spec-fail", `,"fail":true`))
	failedID := r.json(t)["operation"].(map[string]any)["id"].(string)

	type call struct {
		method, path string
		signed       bool
		status       int
	}
	calls := []call{
		{"GET", "/healthz", false, 200},
		{"GET", "/readyz", false, 200},
		{"GET", "/metrics", false, 200},
		{"GET", "/openapi.yaml", false, 200},
		{"GET", "/v1/operations/" + opID, true, 200},
		{"GET", "/v1/operations/" + failedID + "?wait=1", true, 200},
		{"GET", "/v1/operations/00000000-0000-4000-8000-000000000000", true, 404},
		{"GET", "/v1/operations/" + opID + "?wait=99", true, 422},
		{"GET", "/v1/operations/" + opID, false, 401},
	}
	conform := func(method, path string, resp response, status int) {
		t.Helper()
		if resp.Status != status {
			t.Errorf("%s %s: %d, want %d: %s", method, path, resp.Status, status, resp.Body)
			return
		}
		req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s %s: not in spec: %v", method, path, err)
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status,
			Header: resp.Header, Body: io.NopCloser(bytes.NewReader(resp.Body)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
			t.Errorf("%s %s (%d): %v", method, path, resp.Status, err)
		}
	}
	for _, c := range calls {
		var resp response
		if c.signed {
			resp = h.billing(c.method, c.path, nil)
		} else {
			req, _ := http.NewRequest(c.method, h.http.URL+c.path, nil)
			resp = h.do(req)
		}
		conform(c.method, c.path, resp, c.status)
	}

	// Admin calls with bodies, in order (they build on each other): IP pools.
	pools := ippool.NewService(h.db)
	adminCalls := []struct {
		method, path, body string
		status             int
		then               func() error
	}{
		{"PUT", "/v1/admin/ip-pools/pool-a", ipPoolJSON("", "203.0.113.10", "203.0.113.200"), 201,
			func() error {
				_, err := pools.Allocate(t.Context(), "pool-a", models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-spec"})
				return err
			}},
		{"PUT", "/v1/admin/ip-pools/pool-a", ipPoolJSON("pool-a", "203.0.113.10", "203.0.113.250"), 200, nil},
		{"PUT", "/v1/admin/ip-pools/pool-a", ipPoolJSON("", "203.0.113.11", "203.0.113.250"), 409, nil},
		{"PUT", "/v1/admin/ip-pools/pool-b", ipPoolJSON("", "203.0.113.1", "203.0.113.250"), 422, nil},
		{"PUT", "/v1/admin/ip-pools/pool-b", `{"name":`, 400, nil},
		{"PUT", "/v1/admin/ip-pools/pool-b", ipPoolJSON("", "203.0.113.201", "203.0.113.210"), 201, nil},
		{"GET", "/v1/admin/ip-pools", "", 200, nil},
		{"DELETE", "/v1/admin/ip-pools/pool-a", "", 409, nil},
		{"DELETE", "/v1/admin/ip-pools/pool-b", "", 204, nil},
		{"DELETE", "/v1/admin/ip-pools/pool-b", "", 404, nil},
	}
	for _, c := range adminCalls {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		conform(c.method, c.path, h.signed(c.method, c.path, "ops", adminSecret, body), c.status)
		if c.then != nil {
			if err := c.then(); err != nil {
				t.Fatal(err)
			}
		}
	}
	conform("GET", "/v1/admin/ip-pools", h.billing("GET", "/v1/admin/ip-pools", nil), 403)
	_ = routers.Route{}
}

// openAPIChecker validates answers against openapi.yaml.
func openAPIChecker(t *testing.T) func(method, path string, r response, status int) {
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return func(method, path string, resp response, status int) {
		t.Helper()
		if resp.Status != status {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.Status, status, resp.Body)
		}
		req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: not in spec: %v", method, path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status,
			Header: resp.Header, Body: io.NopCloser(bytes.NewReader(resp.Body)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
			t.Errorf("%s %s (%d): %v", method, path, resp.Status, err)
		}
	}
}

// declaresHeader reports whether op lists the header parameter name (directly or by reference).
func declaresHeader(op *openapi3.Operation, name string) bool {
	for _, p := range op.Parameters {
		if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && strings.EqualFold(p.Value.Name, name) {
			return true
		}
	}
	return false
}

// openapi.yaml declares Idempotency-Key and Accept-Language as header parameters (so that a
// generated client can send them) on exactly the operations whose server honours them, as
// probed on every operation: an Idempotency-Key over 255 characters is refused naming the
// header only where the idempotency middleware runs (R36: POSTs under /v1, except the console's
// credential), and Accept-Language: de comes back as Content-Language: de where the answer is
// translated. /metrics is probed with its bearer token configured (its 401 is translated).
func TestOpenAPIDeclaresTheHeadersTheServerHonours(t *testing.T) {
	doc := loadSpec(t)
	h := newHarnessWith(t, "sqlite", func(o *harnessOpts) { o.metricsToken = "metrics-token-0123456789" })
	pathParam := regexp.MustCompile(`\{[a-z_]+\}`)
	longKey := strings.Repeat("k", 256)
	probed := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			uri := pathParam.ReplaceAllString(path, "probe-1")
			opts := []reqOpt{withHeader("Idempotency-Key", longKey), withHeader("Accept-Language", "de")}
			if strings.HasSuffix(path, "/ws") { // a WebSocket handshake, or the token is not looked at
				opts = append(opts, withHeader("Connection", "Upgrade"), withHeader("Upgrade", "websocket"),
					withHeader("Sec-WebSocket-Version", "13"), withHeader("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="))
			}
			var r response
			if strings.HasPrefix(path, "/v1/") {
				r = h.signed(method, uri, "ops", adminSecret, nil, opts...)
			} else {
				req, _ := http.NewRequest(method, h.http.URL+uri, nil)
				for _, o := range opts {
					o(req)
				}
				r = h.do(req)
			}
			probed++
			idem := r.Status == http.StatusUnprocessableEntity && bytes.Contains(r.Body, []byte(`"field":"Idempotency-Key"`))
			if declared := declaresHeader(op, "Idempotency-Key"); declared != idem {
				t.Errorf("%s %s: Idempotency-Key declared %v, honoured %v (%d %s)", method, path, declared, idem, r.Status, r.Body)
			}
			lang := r.Header.Get("Content-Language") == "de"
			if declared := declaresHeader(op, "Accept-Language"); declared != lang {
				t.Errorf("%s %s: Accept-Language declared %v, honoured %v (%d, Content-Language %q)", method, path, declared, lang,
					r.Status, r.Header.Get("Content-Language"))
			}
		}
	}
	if probed < 40 {
		t.Fatalf("only %d operations probed", probed)
	}
}
