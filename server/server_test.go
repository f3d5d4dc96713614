package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/models/dbtest"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server"
)

func eachDialect(t *testing.T, f func(t *testing.T, h *harness)) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) { f(t, newHarness(t, d)) })
	}
}

func job(serviceID string, extra string) []byte {
	return []byte(fmt.Sprintf(`{"service_id":%q%s}`, serviceID, extra))
}

// R35: bad, expired, tampered and replayed signatures are refused with 401.
func TestSignatureRefusals(t *testing.T) {
	h := newHarness(t, "sqlite")
	path := "/v1/operations/00000000-0000-4000-8000-000000000000"
	ts := strconv.FormatInt(h.clock().Unix(), 10)
	good := server.Sign([]byte(billingSecret), ts, "GET", path, nil)

	mk := func(key, ts, sig string) response {
		req, _ := http.NewRequest("GET", h.http.URL+path, nil)
		if key != "" {
			req.Header.Set(server.HeaderKey, key)
		}
		if ts != "" {
			req.Header.Set(server.HeaderTimestamp, ts)
		}
		if sig != "" {
			req.Header.Set(server.HeaderSignature, sig)
		}
		return h.do(req)
	}
	cases := []struct {
		name string
		r    response
		code string
	}{
		{"no headers", mk("", "", ""), "signature_invalid"},
		{"no signature", mk("whmcs", ts, ""), "signature_invalid"},
		{"unknown client", mk("nobody", ts, good), "signature_invalid"},
		{"wrong secret", mk("whmcs", ts, server.Sign([]byte("nope-nope-nope"), ts, "GET", path, nil)), "signature_invalid"},
		{"other client's key", mk("other", ts, good), "signature_invalid"},
		{"tampered path", mk("whmcs", ts, server.Sign([]byte(billingSecret), ts, "GET", path+"x", nil)), "signature_invalid"},
		{"tampered method", mk("whmcs", ts, server.Sign([]byte(billingSecret), ts, "POST", path, nil)), "signature_invalid"},
		{"tampered timestamp", mk("whmcs", strconv.FormatInt(h.clock().Unix()+1, 10), good), "signature_invalid"},
		{"v0 prefix", mk("whmcs", ts, strings.Replace(good, "v1=", "v0=", 1)), "signature_invalid"},
		{"truncated", mk("whmcs", ts, good[:len(good)-2]), "signature_invalid"},
		{"garbage timestamp", mk("whmcs", "yesterday", good), "signature_invalid"},
		{"old", mk("whmcs", strconv.FormatInt(h.clock().Unix()-301, 10),
			server.Sign([]byte(billingSecret), strconv.FormatInt(h.clock().Unix()-301, 10), "GET", path, nil)), "signature_expired"},
		{"future", mk("whmcs", strconv.FormatInt(h.clock().Unix()+301, 10),
			server.Sign([]byte(billingSecret), strconv.FormatInt(h.clock().Unix()+301, 10), "GET", path, nil)), "signature_expired"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkProblem(t, c.r, 401, c.code) })
	}

	// A tampered body on a POST.
	body := job("svc-1", "")
	req, _ := http.NewRequest("POST", h.http.URL+"/v1/_test/jobs", strings.NewReader(string(body)+" "))
	req.Header.Set(server.HeaderKey, "whmcs")
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(billingSecret), ts, "POST", "/v1/_test/jobs", body))
	checkProblem(t, h.do(req), 401, "signature_invalid")

	// Replay: a captured, valid request sent again after the window.
	first := mk("whmcs", ts, good)
	checkProblem(t, first, 404, "not_found") // accepted, the operation just does not exist
	h.advance(301 * time.Second)
	checkProblem(t, mk("whmcs", ts, good), 401, "signature_expired")
}

// R35, R46: a missing scope is 403; a billing client sees only its own operations (404).
func TestScopesAndOwnership(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-own", ""))
		if r.Status != 200 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		id := r.json(t)["operation"].(map[string]any)["id"].(string)
		path := "/v1/operations/" + id
		checkProblem(t, h.signed("GET", path, "shop", shopSecret, nil), 403, "forbidden")
		checkProblem(t, h.signed("GET", path, "other", otherSecret, nil), 404, "not_found")
		if r := h.signed("GET", path, "ops", adminSecret, nil); r.Status != 200 {
			t.Fatalf("admin read: %d %s", r.Status, r.Body)
		}
		if r := h.billing("GET", path, nil); r.Status != 200 {
			t.Fatalf("own read: %d", r.Status)
		}
		// Another client naming the same service id queues work on a service of its own (R46):
		// neither sees the other's operation.
		r = h.signed("POST", "/v1/_test/jobs", "other", otherSecret, job("svc-own", ""))
		if r.Status != 202 {
			t.Fatalf("other client's svc-own: %d %s", r.Status, r.Body)
		}
		otherPath := "/v1/operations/" + r.json(t)["operation"].(map[string]any)["id"].(string)
		checkProblem(t, h.billing("GET", otherPath, nil), 404, "not_found")
		checkProblem(t, h.signed("GET", path, "other", otherSecret, nil), 404, "not_found")
	})
}

// R37: malformed input is a 4xx problem+json with a code, never a 500, and changes nothing.
func TestMalformedInputsAreProblems(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		big := `{"service_id":"a","note":"` + strings.Repeat("x", server.MaxBodyBytes) + `"}`
		type tc struct {
			method, path, body string
			status             int
			code               string
			header             [2]string
		}
		cases := []tc{
			{"POST", "/v1/_test/jobs", `{`, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", `not json`, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", ``, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", `   `, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", `[]`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `"svc"`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `null`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":1}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":null}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":["a"]}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":{"a":1}}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":""}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"has space"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"` + strings.Repeat("a", 65) + `"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","sleep_ms":"10"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","sleep_ms":1.5}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","sleep_ms":-1}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","sleep_ms":99999999999999999999}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","fail":"yes"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","swap_mb":512}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok","password":"abc"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok"} {"service_id":"again"}`, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok"}trailing`, 400, "malformed_json", [2]string{}},
			{"POST", "/v1/_test/jobs", "{\"service_id\":\"\xff\xfe\"}", 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok"}`, 415, "unsupported_media_type", [2]string{"Content-Type", "text/plain"}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok"}`, 415, "unsupported_media_type", [2]string{"Content-Type", "application/x-www-form-urlencoded"}},
			{"POST", "/v1/_test/jobs", big, 413, "body_too_large", [2]string{}},
			{"POST", "/v1/_test/jobs?wait=61", `{"service_id":"ok-wait"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs?wait=abc", `{"service_id":"ok-wait2"}`, 422, "validation_failed", [2]string{}},
			{"POST", "/v1/_test/jobs", `{"service_id":"ok-key"}`, 422, "validation_failed", [2]string{"Idempotency-Key", strings.Repeat("k", 256)}},
			{"GET", "/v1/operations/not-an-id", ``, 404, "not_found", [2]string{}},
			{"GET", "/v1/operations/%00%01", ``, 404, "not_found", [2]string{}},
			{"GET", "/v1/operations/" + strings.Repeat("a", 300), ``, 404, "not_found", [2]string{}},
			{"GET", "/v1/operations/00000000-0000-4000-8000-00000000000G", ``, 404, "not_found", [2]string{}},
			{"GET", "/v1/operations/00000000-0000-4000-8000-000000000000?wait=-1", ``, 422, "validation_failed", [2]string{}},
			{"GET", "/v1/operations/00000000-0000-4000-8000-000000000000?wait=1e3", ``, 422, "validation_failed", [2]string{}},
			{"GET", "/v1/nothing-here", ``, 404, "route_not_found", [2]string{}},
			{"DELETE", "/v1/operations/00000000-0000-4000-8000-000000000000", ``, 405, "method_not_allowed", [2]string{}},
		}
		if len(cases) < 30 {
			t.Fatalf("only %d cases", len(cases))
		}
		for i, c := range cases {
			t.Run(fmt.Sprintf("%02d_%s", i, c.code), func(t *testing.T) {
				var opts []reqOpt
				if c.header[0] != "" {
					opts = append(opts, withHeader(c.header[0], c.header[1]))
				}
				var body []byte
				if c.method == "POST" {
					body = []byte(c.body)
				}
				r := h.billing(c.method, c.path, body, opts...)
				if r.Status >= 500 {
					t.Fatalf("server error %d: %s", r.Status, r.Body)
				}
				checkProblem(t, r, c.status, c.code)
			})
		}
		// Nothing was created by any of them.
		if n := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations"); n != 0 {
			t.Fatalf("%d operations created by malformed requests", n)
		}
		if svcs := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM services"); svcs != 0 {
			t.Fatalf("%d services created by malformed requests", svcs)
		}
	})
}

func TestValidationErrorsListFieldsTranslated(t *testing.T) {
	h := newHarness(t, "sqlite")
	r := h.billing("POST", "/v1/_test/jobs", []byte(`{"service_id":"","swap_mb":1}`), withHeader("Accept-Language", "de-CH, en;q=0.5"))
	m := checkProblem(t, r, 422, "validation_failed")
	if r.Header.Get("Content-Language") != "de" {
		t.Fatalf("Content-Language %q", r.Header.Get("Content-Language"))
	}
	errs := m["errors"].([]any)
	first := errs[0].(map[string]any)
	if first["field"] != "swap_mb" || first["code"] != "unknown_field" || !strings.Contains(first["message"].(string), "swap_mb") {
		t.Fatalf("errors = %v", errs)
	}
	r = h.billing("POST", "/v1/_test/jobs", []byte(`{"service_id":""}`), withHeader("Accept-Language", "pt-BR"))
	m = checkProblem(t, r, 422, "validation_failed")
	e := m["errors"].([]any)[0].(map[string]any)
	if e["field"] != "service_id" || e["code"] != "required" || r.Header.Get("Content-Language") != "pt" {
		t.Fatalf("errors = %v, lang %s", e, r.Header.Get("Content-Language"))
	}
}

// R36: an Idempotency-Key replays the first answer; another body with the same key is 422.
func TestIdempotentReplayAndConflict(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		key := withHeader("Idempotency-Key", "create-42-attempt-1")
		first := h.billing("POST", "/v1/_test/jobs", job("svc-42", ""), key)
		if first.Status != 202 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		again := h.billing("POST", "/v1/_test/jobs", job("svc-42", ""), key)
		if again.Status != 202 || string(again.Body) != string(first.Body) || again.Header.Get("Location") != first.Header.Get("Location") {
			t.Fatalf("replay: %d %s vs %s", again.Status, again.Body, first.Body)
		}
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("replay not marked")
		}
		checkProblem(t, h.billing("POST", "/v1/_test/jobs", job("svc-43", ""), key), 422, "idempotency_key_reused")
		// Same key, another client: independent.
		if r := h.signed("POST", "/v1/_test/jobs", "other", otherSecret, job("svc-other", ""), key); r.Status != 202 {
			t.Fatalf("other client, same key: %d %s", r.Status, r.Body)
		}
		if n := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations WHERE service_id = ?", "svc-42"); n != 1 {
			t.Fatalf("%d operations for svc-42, want 1", n)
		}
		// After 24 h the key is free again.
		dbtest.Exec(t, h.db, "UPDATE idempotency_keys SET expires_at = ?", time.Now().UTC().Add(-time.Minute))
		if r := h.billing("POST", "/v1/_test/jobs", job("svc-43", ""), key); r.Status != 202 {
			t.Fatalf("expired key reuse: %d %s", r.Status, r.Body)
		}
	})
}

// R36: concurrent requests with one key have one effect, and all get the same answer.
func TestConcurrentSameIdempotencyKeyOneEffect(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		const n = 12
		var wg sync.WaitGroup
		bodies := make([]string, n)
		statuses := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := h.billing("POST", "/v1/_test/jobs", job("svc-race", `,"sleep_ms":50`), withHeader("Idempotency-Key", "race"))
				bodies[i], statuses[i] = string(r.Body), r.Status
			}(i)
		}
		wg.Wait()
		for i := range bodies {
			if statuses[i] != 202 || bodies[i] != bodies[0] {
				t.Fatalf("answer %d: %d %s (first %s)", i, statuses[i], bodies[i], bodies[0])
			}
		}
		if ops := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations"); ops != 1 {
			t.Fatalf("%d operations from %d identical requests", ops, n)
		}
	})
}

// ?wait returns as soon as the operation ends (woken, not polled on a fixed sleep).
func TestWaitReturnsPromptlyWhenOperationEnds(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.billing("POST", "/v1/_test/jobs", job("svc-wait", `,"gate":true`))
		if r.Status != 202 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		op := r.json(t)["operation"].(map[string]any)
		if r.Header.Get("Location") != "/v1/operations/"+op["id"].(string) {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		done := make(chan response, 1)
		go func() { done <- h.billing("GET", "/v1/operations/"+op["id"].(string)+"?wait=30", nil) }()
		// The gate is opened only once the long-poll waits on the operation: opened earlier,
		// the request could read the finished row and not prove it was woken.
		poll.Until(t, 10*time.Second, "the long-poll to wait on the operation", func() bool {
			return h.exec.Broker().Waiting(op["id"].(string)) > 0
		})
		select {
		case r := <-done:
			t.Fatalf("wait returned before the operation ended: %s", r.Body)
		default:
		}
		released := time.Now()
		close(h.gate)
		r = <-done
		elapsed := time.Since(released)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		got := r.json(t)["operation"].(map[string]any)
		if got["state"] != "succeeded" || got["finished_at"] == nil {
			t.Fatalf("operation %v", got)
		}
		if res, _ := got["result"].(map[string]any); res["ok"] != true {
			t.Fatalf("the action's result is not shown: %v", got)
		}
		if elapsed > 2*time.Second {
			t.Fatalf("wait took %v after the operation ended", elapsed)
		}
	})
}

func TestWaitTimesOutWith202OnMutation(t *testing.T) {
	h := newHarness(t, "sqlite")
	start := time.Now()
	r := h.billing("POST", "/v1/_test/jobs?wait=1", job("svc-slow", `,"gate":true`))
	if r.Status != 202 || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("%d after %v: %s", r.Status, time.Since(start), r.Body)
	}
	if s := r.json(t)["operation"].(map[string]any)["state"]; s != "running" && s != "queued" {
		t.Fatalf("state %v", s)
	}
}

func TestFailedOperationCarriesTranslatedError(t *testing.T) {
	h := newHarness(t, "sqlite")
	r := h.billing("POST", "/v1/_test/jobs?wait=10", job("svc-fail", `,"fail":true`), withHeader("Accept-Language", "fr"))
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	op := r.json(t)["operation"].(map[string]any)
	e := op["error"].(map[string]any)
	if op["state"] != "failed" || e["code"] != "proxmox_task_failed" || e["detail"] == "" || r.Header.Get("Content-Language") != "fr" {
		t.Fatalf("operation %v", op)
	}
	var svcLock *string
	dbtest.Scan(t, h.db, &svcLock, "SELECT lock_operation_id FROM services WHERE service_id = ?", "svc-fail")
	if svcLock != nil {
		t.Fatalf("service lock not released after failure: %v", *svcLock)
	}
}

// Secrets (client secrets, transient passwords) never reach a log line, a response or the database.
func TestNoSecretInLogsResponsesOrDatabase(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		const password = "S3cret-Root-Passw0rd"
		r := h.billing("POST", "/v1/_test/jobs?wait=5", job("svc-secret", `,"password":"`+password+`"`))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		// Plus error paths: a bad signature, a bad body, a panic-free 404.
		h.signed("GET", "/v1/operations/x", "whmcs", "wrong-secret-123", nil)
		h.billing("POST", "/v1/_test/jobs", []byte(`{"service_id":"x","password":"`+password+`","bad":1}`))
		logs := h.logs.String()
		if !strings.Contains(logs, `"route"`) {
			t.Fatalf("log capture is empty: %q", logs)
		}
		for _, s := range []string{password, billingSecret, otherSecret, adminSecret} {
			if strings.Contains(logs, s) {
				t.Errorf("secret %q in logs", s)
			}
			if strings.Contains(string(r.Body), s) {
				t.Errorf("secret %q in response", s)
			}
		}
		for _, table := range []string{"operations", "services", "idempotency_keys", "audit_events"} {
			raw, _ := json.Marshal(dbtest.TableRows(t, h.db, table))
			if strings.Contains(string(raw), password) {
				t.Errorf("password stored in %s", table)
			}
		}
	})
}

func TestHealthReadyAndRecovery(t *testing.T) {
	h := newHarness(t, "sqlite")
	req, _ := http.NewRequest("GET", h.http.URL+"/healthz", nil)
	if r := h.do(req); r.Status != 200 {
		t.Fatal(r.Status)
	}
	req, _ = http.NewRequest("GET", h.http.URL+"/readyz", nil)
	r := h.do(req)
	if r.Status != 200 || r.json(t)["status"] != "ready" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// A panicking handler answers problem+json 500 with the request id.
	h.srv.Engine().GET("/v1/_test/panic", func(*gin.Context) { panic("boom") })
	req, _ = http.NewRequest("GET", h.http.URL+"/v1/_test/panic", nil)
	req.Header.Set("X-Request-Id", "req-123")
	r = h.do(req)
	m := checkProblem(t, r, 500, "internal_error")
	if m["request_id"] != "req-123" || r.Header.Get("X-Request-Id") != "req-123" {
		t.Fatalf("request id: %v", m)
	}
	// The database going away makes readiness fail.
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest("GET", h.http.URL+"/readyz", nil)
	if r := h.do(req); r.Status != 503 {
		t.Fatalf("readyz with closed db: %d", r.Status)
	}
}
