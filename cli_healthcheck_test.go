package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func healthcheck(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), append([]string{"healthcheck"}, args...), &out, &errb)
	return code, out.String() + errb.String()
}

// The probe against the embedded default: 0 while it serves, 1 once it is gone.
func TestHealthcheckAgainstServe(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")
	out, errb, done, cancel := startCmd(t, "serve")
	addr := waitFor(t, out, regexp.MustCompile(`API +http://(\S+)`), 15*time.Second)[1]
	t.Setenv("PVEBILL_LISTEN", addr)
	if code, msg := healthcheck(t); code != 0 {
		t.Fatalf("healthcheck of a running server: exit %d: %s", code, msg)
	}
	servedOnce(t, out, errb)
	cancel()
	select {
	case code := <-done:
		done <- code // for startCmd's clean-up
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	if code, msg := healthcheck(t, "--timeout", "1s"); code != 1 {
		t.Fatalf("healthcheck of a stopped server: exit %d, want 1: %s", code, msg)
	}
}

// The listen address comes from the config file (with its PVEBILL_ overrides); an answer
// other than 200 is unhealthy.
func TestHealthcheckConfigAndStatus(t *testing.T) {
	status := http.StatusOK
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.Path)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pvebill.yaml")
	cfg := "listen: \"" + addr + "\"\ndatabase:\n  driver: sqlite\n  dsn: \"" + filepath.Join(dir, "p.db") + "\"\n" +
		"clients:\n  - id: whmcs\n    secret: \"a-long-enough-secret-0123456789abcdef\"\n    scopes: [billing]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := healthcheck(t, "--config", cfgPath); code != 0 {
		t.Fatalf("200: exit %d: %s", code, msg)
	}
	status = http.StatusServiceUnavailable
	if code, msg := healthcheck(t, "--config", cfgPath); code != 1 || !strings.Contains(msg, "503") {
		t.Fatalf("503: exit %d, want 1 naming the status: %s", code, msg)
	}
	if want := []string{"GET /healthz", "GET /healthz"}; strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("requests %v, want %v", paths, want)
	}
	if code, _ := healthcheck(t, "--config", filepath.Join(dir, "missing.yaml")); code != 1 {
		t.Fatalf("a missing config file: exit %d, want 1", code)
	}
}

func TestHealthURL(t *testing.T) {
	for listen, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		":8080":          "http://127.0.0.1:8080/healthz",
		"[::]:8080":      "http://[::1]:8080/healthz",
		"10.0.0.5:9000":  "http://10.0.0.5:9000/healthz",
		"pvebill:8080":   "http://pvebill:8080/healthz",
		"127.0.0.1:8080": "http://127.0.0.1:8080/healthz",
	} {
		if got, err := healthURL(listen); err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", listen, got, err, want)
		}
	}
	if _, err := healthURL("no-port"); err == nil {
		t.Error("an address without a port is accepted")
	}
}
