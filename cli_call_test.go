package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pvebill/server"
)

// `pvebill call --verbose` shows what it signed: the canonical lines exactly as signed (the
// request URI with its query as sent), the body by length and SHA-256, and the headers; the
// signature it prints is the one a server recomputes from those lines and the secret, and
// neither the secret nor the body's text is printed.
func TestCallVerbosePrintsTheCanonicalString(t *testing.T) {
	const secret = "call-verbose-secret-0123456789abcdef"
	body := []byte(`{"root_password":"Sup3r-Secret-pw"}`)
	var got struct{ uri, ts, sig string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		got.uri, got.ts, got.sig = r.URL.RequestURI(), r.Header.Get(server.HeaderTimestamp), r.Header.Get(server.HeaderSignature)
		if server.Sign([]byte(secret), got.ts, r.Method, got.uri, raw) != got.sig {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfgPath, bodyPath := filepath.Join(dir, "pvebill.yaml"), filepath.Join(dir, "body.json")
	cfg := "listen: \"127.0.0.1:1\"\ndatabase:\n  driver: sqlite\n  dsn: \"" + filepath.Join(dir, "p.db") + "\"\n" +
		"clients:\n  - id: whmcs\n    secret: \"" + secret + "\"\n    scopes: [billing]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bodyPath, body, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runOnce(t, "call", "--config", cfgPath, "--url", srv.URL, "--verbose", "POST", "/v1/services/1042/password?x=a%20b&y=1", bodyPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	sum := sha256.Sum256(body)
	want := fmt.Sprintf("signed (HMAC-SHA256 with the client's secret over these lines, then the raw body byte for byte):\n"+
		"  %q\n  \"POST\\n\"\n  \"/v1/services/1042/password?x=a%%20b&y=1\\n\"\n  body: %d bytes, sha256 %s\n"+
		"%s: whmcs\n%s: %s\n%s: %s\n",
		got.ts+"\n", len(body), hex.EncodeToString(sum[:]),
		server.HeaderKey, server.HeaderTimestamp, got.ts, server.HeaderSignature, got.sig)
	if !strings.Contains(out, want) {
		t.Fatalf("verbose output:\n%s\nwant it to hold:\n%s", out, want)
	}
	for _, leak := range []string{secret, "Sup3r-Secret-pw"} {
		if strings.Contains(out, leak) {
			t.Errorf("the verbose output shows %q", leak)
		}
	}
}
