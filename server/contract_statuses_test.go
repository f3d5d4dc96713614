package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"pvebill/server"
)

// contractBody is one kind of bad request body the contract test sends to every route.
type contractBody struct {
	name        string
	body        []byte
	contentType string // "" leaves the harness's (application/json with a body)
}

func contractBodies() []contractBody {
	oversized := append(append([]byte(`{"reason":"`), bytes.Repeat([]byte("a"), server.MaxBodyBytes)...), []byte(`"}`)...)
	return []contractBody{
		{name: "no body"},
		{name: "malformed JSON", body: []byte(`{"service_id":`)},
		{name: "oversized", body: oversized},
		{name: "a JSON array", body: []byte(`["not","an","object"]`)},
		{name: "a JSON string", body: []byte(`"text"`)},
		{name: "wrong field types", body: []byte(`{"service_id":5,"plan":true,"hostname":[],"os":{},"reason":1,` +
			`"resolution":2,"intent_id":false,"confirmations":"all","name":7,"code":8,"cidr":null,"cores":"two"}`)},
		{name: "unknown field", body: []byte(`{"unknown_field":1}`)},
		{name: "text/plain", body: []byte(`{}`), contentType: "text/plain"},
		{name: "form", body: []byte(`plan=ct-1g`), contentType: "application/x-www-form-urlencoded"},
	}
}

// contractPath fills a spec path's parameters with values of objects that exist, so that the
// route gets as far as reading its body.
func contractPath(path string, values map[string]string) string {
	for k, v := range values {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return path
}

// Every route, driven with malformed, oversized and wrong-type bodies, answers only statuses
// openapi.yaml declares for it, with bodies that conform.
func TestEveryRouteAnswersDeclaredStatusesToBadBodies(t *testing.T) {
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	h := newServicesHarness(t, "sqlite")
	created := h.billing("POST", "/v1/services?wait=20", createBody("contract-1", "ct-1g"))
	op := operationOf(t, created, http.StatusOK)
	preview := h.billing("POST", "/v1/services/contract-1/reinstall/preview?wait=20", []byte(`{}`))
	intent, _ := preview.json(t)["intent"].(map[string]any)
	if intent == nil {
		t.Fatalf("preview: %d %s", preview.Status, preview.Body)
	}
	values := map[string]string{"service_id": "contract-1", "id": op["id"].(string), "intent_id": intent["id"].(string),
		"code": "ct-1g", "name": "pool-a"}

	var undeclared []string
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, tmpl := range paths {
		for method := range doc.Paths.Value(tmpl).Operations() {
			path := contractPath(tmpl, values)
			for _, b := range contractBodies() {
				resp := contractCall(h, method, path, b)
				if msg := conformsAnyStatus(router, method, path, resp); msg != "" {
					undeclared = append(undeclared, method+" "+tmpl+" with "+b.name+": "+msg)
				}
			}
		}
	}
	for _, u := range undeclared {
		t.Error(u)
	}
}

// contractCall sends one body to a route: /v1/admin routes as the admin client, other /v1
// routes as the billing client, the rest unsigned.
func contractCall(h *svcHarness, method, path string, b contractBody) response {
	h.t.Helper()
	var opts []reqOpt
	if b.contentType != "" {
		opts = append(opts, withHeader("Content-Type", b.contentType))
	}
	switch {
	case strings.HasPrefix(path, "/v1/admin/"):
		return h.signed(method, path, "ops", adminSecret, b.body, opts...)
	case strings.HasPrefix(path, "/v1/"):
		return h.billing(method, path, b.body, opts...)
	}
	req, err := http.NewRequest(method, h.http.URL+path, bytes.NewReader(b.body))
	if err != nil {
		h.t.Fatal(err)
	}
	for _, o := range opts {
		o(req)
	}
	return h.do(req)
}

// conformsAnyStatus validates an answer of any status against the route's declared responses;
// it returns what is wrong, or "".
func conformsAnyStatus(router routers.Router, method, path string, resp response) string {
	req, err := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
	if err != nil {
		return err.Error()
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return "not in the spec: " + err.Error()
	}
	if route.Operation.Responses.Status(resp.Status) == nil {
		return fmt.Sprintf("status %d is not declared (%s)", resp.Status, resp.Body)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(resp.Body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Sprintf("%d does not conform: %v", resp.Status, err)
	}
	return ""
}

// Headers over the HTTP server's limit are refused before routing, on the probes too, with the
// 431 the spec declares for them.
func TestOversizedHeadersAnswerDeclared431(t *testing.T) {
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, "sqlite")
	for _, path := range []string{"/healthz", "/readyz", "/openapi.yaml"} {
		req, err := http.NewRequest("GET", h.http.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Padding", strings.Repeat("a", 2<<20))
		resp := h.do(req)
		if resp.Status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("GET %s with 2 MiB of headers: %d, want 431", path, resp.Status)
		}
		if msg := conformsAnyStatus(router, "GET", path, resp); msg != "" {
			t.Errorf("GET %s: %s", path, msg)
		}
	}
}
