package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
)

// R47: a signed mutating request is accepted once. Sent again, with or without its
// Idempotency-Key or with another one, it is 401 signature_replayed and has no effect; a GET may
// be repeated, and a retry signed anew still replays the first answer through its key.
func TestSignatureReplayRefused(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		body := job("svc-replay", "")
		at := h.clock()
		send := func(idemKey string) response {
			req, err := http.NewRequest("POST", h.http.URL+"/v1/_test/jobs", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			sign(req, "whmcs", billingSecret, at, body)
			if idemKey != "" {
				req.Header.Set("Idempotency-Key", idemKey)
			}
			return h.do(req)
		}
		first := send("replay-1")
		if first.Status != 202 {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		for _, key := range []string{"replay-1", "", "replay-2"} {
			r := send(key)
			checkProblem(t, r, 401, "signature_replayed")
			if c := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Pvebill-HMAC-SHA256 ") {
				t.Fatalf("WWW-Authenticate %q", c)
			}
		}
		if ops := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations WHERE service_id = ?", "svc-replay"); ops != 1 {
			t.Fatalf("%d operations, want 1", ops)
		}
		// A retry signed anew (a later timestamp) replays the first answer through its key.
		retry := h.signedAt("POST", "/v1/_test/jobs", at.Add(time.Second), body, withHeader("Idempotency-Key", "replay-1"))
		if retry.Status != 202 || retry.Header.Get("Idempotent-Replayed") != "true" || string(retry.Body) != string(first.Body) {
			t.Fatalf("retry: %d %s", retry.Status, retry.Body)
		}
		// Reads are not claimed.
		req, err := http.NewRequest("GET", h.http.URL+first.Header.Get("Location"), nil)
		if err != nil {
			t.Fatal(err)
		}
		sign(req, "whmcs", billingSecret, at, nil)
		for i := 0; i < 2; i++ {
			if r := h.do(req.Clone(req.Context())); r.Status != 200 {
				t.Fatalf("GET %d: %d %s", i, r.Status, r.Body)
			}
		}
		if seen := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM seen_signatures"); seen != 2 {
			t.Fatalf("%d seen signatures, want 2 (the first request and the retry)", seen)
		}
	})
}

// signedAt sends a billing request signed at a given time.
func (h *harness) signedAt(method, path string, at time.Time, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	sign(req, "whmcs", billingSecret, at, body)
	for _, o := range opts {
		o(req)
	}
	return h.do(req)
}
