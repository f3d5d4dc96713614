package server

import (
	"strconv"
	"testing"
	"time"

	"pvebill/server/config"
)

// FuzzVerify: arbitrary headers and bodies never panic and never authenticate unless they carry
// the exact signature; a correct signature over the same inputs always does.
func FuzzVerify(f *testing.F) {
	f.Add("whmcs", "1700000000", "v1=00", "GET", "/v1/plans", []byte(""))
	f.Add("", "", "", "POST", "/v1/services?wait=5", []byte(`{"service_id":"a"}`))
	f.Add("whmcs", "-1", "v1=", "DELETE", "/", []byte{0xff, 0x00})
	f.Add("whmcs", "99999999999999999999", "v1=zz", "PUT", "/v1/admin/plans/x", []byte("{}"))
	clients := NewClients([]config.Client{{ID: "whmcs", Secret: "fuzz-secret-123", Scopes: []string{"billing"}}})
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, key, ts, sig, method, uri string, body []byte) {
		cl, err := clients.Verify(key, ts, sig, method, uri, body, now)
		if err == nil {
			if cl == nil || sig != Sign([]byte("fuzz-secret-123"), ts, method, uri, body) {
				t.Fatalf("accepted a request without its signature: %q %q %q", key, ts, sig)
			}
		}
		good := Sign([]byte("fuzz-secret-123"), ts, method, uri, body)
		cl, err = clients.Verify("whmcs", ts, good, method, uri, body, now)
		if n, perr := strconv.ParseInt(ts, 10, 64); perr == nil && len(ts) <= 12 {
			skew := now.Sub(time.Unix(n, 0))
			inWindow := skew <= signatureWindow && skew >= -signatureWindow
			if inWindow && (err != nil || cl == nil) {
				t.Fatalf("a correct signature was refused: %v", err)
			}
			if !inWindow && err == nil {
				t.Fatalf("an out-of-window timestamp was accepted: %q", ts)
			}
		} else if err == nil {
			t.Fatalf("a malformed timestamp was accepted: %q", ts)
		}
		// A different body never verifies with that signature.
		if _, err := clients.Verify("whmcs", ts, good, method, uri, append(body, 'x'), now); err == nil {
			t.Fatal("signature verified over a tampered body")
		}
	})
}
