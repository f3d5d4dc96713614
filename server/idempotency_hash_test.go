package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// R48: the hash kept for an Idempotency-Key is not an unsalted hash of anything the request
// carries: not of the body, not of the method and path with the body, not of the password.
func TestIdempotencyHashKeepsNoSecret(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		const password = "hunter2-root-password"
		body := job("svc-hash", `,"password":"`+password+`"`)
		if r := h.billing("POST", "/v1/_test/jobs", body, withHeader("Idempotency-Key", "hash-1")); r.Status != 202 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		rec, err := h.db.GetIdempotencyKey(t.Context(), "whmcs", "hash-1")
		if err != nil {
			t.Fatal(err)
		}
		plain := func(parts ...string) string {
			sum := sha256.Sum256([]byte(strings.Join(parts, "")))
			return hex.EncodeToString(sum[:])
		}
		for name, unsalted := range map[string]string{
			"body":             plain(string(body)),
			"method path body": plain("POST\n/v1/_test/jobs\n", string(body)),
			"password":         plain(password),
		} {
			if rec.RequestHash == unsalted {
				t.Errorf("stored request hash is SHA-256 of the %s", name)
			}
		}
		if len(rec.RequestHash) != 64 {
			t.Fatalf("request hash %q", rec.RequestHash)
		}
		// Another client's hash of the same request differs: the key is the client's own.
		h.signed("POST", "/v1/_test/jobs", "other", otherSecret, body, withHeader("Idempotency-Key", "hash-1"))
		other, err := h.db.GetIdempotencyKey(t.Context(), "other", "hash-1")
		if err != nil {
			t.Fatal(err)
		}
		if other.RequestHash == rec.RequestHash {
			t.Fatal("two clients' hashes of one request are equal")
		}
	})
}
