package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"
)

var callRE = regexp.MustCompile(`go run \. (call --config (\S+) GET (\S+))`)

// make run: the embedded default starts on a fresh directory and prints a signed call that works.
func TestEmbeddedDefaultPrintsWorkingCall(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")
	out, _, _, _ := startCmd(t, "serve")
	m := waitFor(t, out, callRE, 15*time.Second)
	// The printed call runs from another terminal, without the server's environment.
	os.Unsetenv("PVEBILL_LISTEN")
	var callOut, callErr bytes.Buffer
	code := run(t.Context(), []string{"call", "--config", m[2], "GET", m[3]}, &callOut, &callErr)
	if code != 0 {
		t.Fatalf("printed call failed (%d): %s %s", code, callErr.String(), callOut.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(callOut.Bytes(), &doc); err != nil {
		t.Fatalf("call printed no JSON: %s", callOut.String())
	}
}

// make run: the demo cluster is configured as a production one (datacenter firewall on, so no
// anti-spoofing warning), and the readiness line carries its details as log fields, not a Go map.
func TestEmbeddedDefaultStartsWithoutWarning(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")
	out, errb, _, _ := startCmd(t, "serve")
	waitFor(t, out, callRE, 15*time.Second)
	line := waitFor(t, errb, regexp.MustCompile(`(?m)^.*msg=cluster .*$`), 5*time.Second)[0]
	for _, field := range []string{"cluster=default", "proxmox=ok", "datacenter_firewall=enabled"} {
		if !strings.Contains(line, field) {
			t.Errorf("readiness line %q has no field %s", line, field)
		}
	}
	if strings.Contains(line, "map[") {
		t.Errorf("readiness line prints a Go map: %q", line)
	}
	if log := errb.String(); strings.Contains(log, "level=WARN") {
		t.Errorf("the demo starts with a warning:\n%s", log)
	}
	servedOnce(t, out, errb)
}

// servedOnce sends one request through the running server and waits for its log line, so that
// the server has been serving (as seen through the log buffer) before the test stops it.
func servedOnce(t *testing.T, out, errb *stacktest.LogBuffer) {
	t.Helper()
	addr := waitFor(t, out, regexp.MustCompile(`API +http://(\S+)`), 15*time.Second)[1]
	// An unsigned call: its access line is at info (the probes' are at debug).
	resp, err := http.Get("http://" + addr + "/v1/plans")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	waitFor(t, errb, regexp.MustCompile(`msg=request .*route=/v1/plans`), 5*time.Second)
}

// R48: the demo's files are its owner's. data/ and data/demo.yaml (which holds a secret with
// admin scope) left from an earlier start with wider modes are tightened as the SQLite file is:
// 0700 for the directory, 0600 for the file, which holds the new secret.
func TestEmbeddedDefaultTightensExistingFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")
	if err := os.Mkdir("data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("data/demo.yaml", []byte("listen: old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{"data": 0o755, "data/demo.yaml": 0o644} {
		if err := os.Chmod(path, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	out, errb, _, _ := startCmd(t, "serve")
	m := waitFor(t, out, callRE, 15*time.Second)
	servedOnce(t, out, errb)
	for path, want := range map[string]os.FileMode{"data": 0o700, "data/demo.yaml": 0o600, "data/pvebill.db": 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
	raw, err := os.ReadFile(m[2])
	if err != nil || !strings.Contains(string(raw), "secret:") || strings.Contains(string(raw), "listen: old") {
		t.Fatalf("%s after the start: %q, %v", m[2], raw, err)
	}
}
