package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"pvebill/modules/stack/stacktest"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"pvebill/models/dbtest"
	"pvebill/modules/callbacks"
)

// GET /v1/admin/callbacks shows each operation's delivery with its attempt log, filters by
// state, refuses bad filters and non-admin clients, and its answers conform to openapi.yaml.
func TestAdminCallbacks(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-cb-ok", ""))
		okID := r.json(t)["operation"].(map[string]any)["id"].(string)
		r = h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-cb-fail", `,"fail":true`))
		failID := r.json(t)["operation"].(map[string]any)["id"].(string)

		fails := 1 // the first POST is refused, then every one is accepted
		var (
			mu     sync.Mutex
			bodies [][]byte
		)
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			b, _ := io.ReadAll(req.Body)
			mu.Lock()
			defer mu.Unlock()
			bodies = append(bodies, b)
			if fails > 0 {
				fails--
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		}))
		defer rcv.Close()
		d := callbacks.New(callbacks.Options{DB: h.db, Concurrency: 1, FirstBackoff: 1,
			Targets: []callbacks.Target{{ClientID: "whmcs", URL: rcv.URL + "/cb", Secret: "callback-secret-0123456789"}}})
		ctx := t.Context()
		if n, err := d.Sweep(ctx); err != nil || n != 2 {
			t.Fatalf("sweep %d, %v", n, err)
		}
		for i := 0; i < 2; i++ {
			if _, err := d.DeliverDue(ctx); err != nil {
				t.Fatal(err)
			}
		}

		// Every event sent is a CallbackEvent of openapi.yaml.
		schema := allowTestAction(loadSpec(t)).Components.Schemas["CallbackEvent"].Value
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) != 3 {
			t.Fatalf("%d callback requests, want 3", len(bodies))
		}
		for _, b := range bodies {
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if err := schema.VisitJSON(v); err != nil {
				t.Errorf("event %s does not match CallbackEvent: %v", b, err)
			}
		}

		r = h.admin("GET", "/v1/admin/callbacks", nil)
		conformCallbacks(t, "/v1/admin/callbacks", r, http.StatusOK)
		list := r.json(t)["callbacks"].([]any)
		if len(list) != 2 {
			t.Fatalf("%d callbacks: %s", len(list), r.Body)
		}
		attempts := 0
		seen := map[string]string{}
		for _, x := range list {
			cb := x.(map[string]any)
			seen[cb["operation_id"].(string)] = cb["operation_state"].(string)
			if cb["state"] != "delivered" || cb["client_id"] != "whmcs" || cb["delivered_at"] == nil || cb["next_attempt_at"] != nil {
				t.Errorf("callback %v", cb)
			}
			log := cb["attempt_log"].([]any)
			attempts += len(log)
			if int(cb["attempts"].(float64)) != len(log) {
				t.Errorf("attempts %v, log %v", cb["attempts"], log)
			}
		}
		if seen[okID] != "succeeded" || seen[failID] != "failed" || attempts != 3 {
			t.Fatalf("operations %v, %d attempts", seen, attempts)
		}

		r = h.admin("GET", "/v1/admin/callbacks?state=expired&limit=5", nil)
		conformCallbacks(t, "/v1/admin/callbacks?state=expired&limit=5", r, http.StatusOK)
		if n := len(r.json(t)["callbacks"].([]any)); n != 0 {
			t.Fatalf("%d expired callbacks", n)
		}
		r = h.admin("GET", "/v1/admin/callbacks?operation_id="+okID, nil)
		if n := len(r.json(t)["callbacks"].([]any)); n != 1 {
			t.Fatalf("%d callbacks for one operation", n)
		}
		checkProblem(t, h.admin("GET", "/v1/admin/callbacks?state=lost", nil), http.StatusUnprocessableEntity, "validation_failed")
		checkProblem(t, h.admin("GET", "/v1/admin/callbacks?limit=0", nil), http.StatusUnprocessableEntity, "validation_failed")
		checkProblem(t, h.billing("GET", "/v1/admin/callbacks", nil), http.StatusForbidden, "forbidden")
	})
}

func conformCallbacks(t *testing.T, path string, resp response, status int) {
	t.Helper()
	if resp.Status != status {
		t.Fatalf("GET %s: %d, want %d: %s", path, resp.Status, status, resp.Body)
	}
	router, err := gorillamux.NewRouter(allowTestAction(loadSpec(t)))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("GET %s: not in spec: %v", path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(resp.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
		t.Errorf("GET %s (%d): %v", path, resp.Status, err)
	}
}

// R48: a callback URL's credentials are used, never kept. The URL carries a user and password
// and a token in its query; the receiver drops the first POST's connection (an error that
// names the URL) and accepts the second only with both credentials. Neither the database rows
// (callback_deliveries, callback_attempts), nor GET /v1/admin/callbacks, nor the log hold the
// password or the token; the attempt log shows the URL with them replaced.
func TestCallbackURLCredentialsAreRedacted(t *testing.T) {
	const (
		password = "cb-Pass-5ecret-77"
		token    = "cb-Query-T0ken-99"
	)
	eachDialect(t, func(t *testing.T, h *harness) {
		h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-cb-cred", ""))
		var (
			mu       sync.Mutex
			accepted int
			dropped  int
		)
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if dropped == 0 {
				dropped++
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return
			}
			user, pass, ok := req.BasicAuth()
			if !ok || user != "hook" || pass != password || req.URL.Query().Get("token") != token ||
				req.URL.Query().Get("site") != "eu" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			accepted++
			w.WriteHeader(http.StatusOK)
		}))
		defer rcv.Close()
		u, _ := url.Parse(rcv.URL)
		full := "http://hook:" + password + "@" + u.Host + "/cb?token=" + token + "&site=eu"
		var logs stacktest.LogBuffer
		d := callbacks.New(callbacks.Options{DB: h.db, Concurrency: 1, FirstBackoff: 1,
			Log:     slog.New(slog.NewTextHandler(&logs, nil)),
			Targets: []callbacks.Target{{ClientID: "whmcs", URL: full, Secret: "callback-secret-0123456789"}}})
		ctx := t.Context()
		if n, err := d.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("sweep %d, %v", n, err)
		}
		for i := 0; i < 2; i++ {
			if _, err := d.DeliverDue(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		if dropped != 1 || accepted != 1 {
			t.Fatalf("receiver: %d dropped, %d accepted with its credentials", dropped, accepted)
		}
		mu.Unlock()

		r := h.admin("GET", "/v1/admin/callbacks", nil)
		conformCallbacks(t, "/v1/admin/callbacks", r, http.StatusOK)
		var rows []map[string]any
		for _, table := range []string{"callback_deliveries", "callback_attempts"} {
			rows = append(rows, dbtest.TableRows(t, h.db, table)...)
		}
		dump := fmt.Sprintf("%v", rows)
		for where, text := range map[string]string{"GET /v1/admin/callbacks": string(r.Body), "the database": dump, "the log": logs.String()} {
			for _, secret := range []string{password, token} {
				if strings.Contains(text, secret) {
					t.Errorf("%s holds %q:\n%s", where, secret, text)
				}
			}
		}
		cb := r.json(t)["callbacks"].([]any)[0].(map[string]any)
		log := cb["attempt_log"].([]any)
		want := "http://hook:xxxxx@" + u.Host + "/cb?token=xxxxx&site=xxxxx"
		if len(log) != 2 || cb["state"] != "delivered" {
			t.Fatalf("callback %v", cb)
		}
		for _, a := range log {
			if a := a.(map[string]any); a["url"] != want {
				t.Errorf("attempt shows url %v, want %s", a["url"], want)
			}
		}
		if e, _ := log[0].(map[string]any)["error"].(string); !strings.Contains(e, "token=xxxxx") {
			t.Errorf("the failed attempt's error %q does not name the redacted URL", e)
		}
	})
}
