package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"
	"pvebill/modules/stack/stacktest/poll"
)

// waitFor polls buf until re matches (or fails the test after d).
func waitFor(t *testing.T, buf *stacktest.LogBuffer, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	var m []string
	if !poll.Wait(d, func() bool { m = re.FindStringSubmatch(buf.String()); return m != nil }) {
		t.Fatalf("no %q in output:\n%s", re, buf.String())
	}
	return m
}

// startCmd runs a long-lived command until the test ends; it returns its output buffers and a
// channel with the exit code.
func startCmd(t *testing.T, args ...string) (*stacktest.LogBuffer, *stacktest.LogBuffer, chan int, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &stacktest.LogBuffer{}, &stacktest.LogBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, out, errb) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("command did not stop")
		}
	})
	return out, errb, done, cancel
}

var listenRE = regexp.MustCompile(`pvebill listening.*?addr[=":]+([0-9.]+:[0-9]+)`)

func TestServeRefusesStaleSchemaUntilMigrated(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pvebill.yaml")
	cfg := "listen: \"127.0.0.1:0\"\nlog_format: text\ndatabase:\n  driver: sqlite\n  dsn: \"" + filepath.Join(dir, "p.db") + "\"\n" +
		"clients:\n  - id: whmcs\n    secret: \"a-long-enough-secret-0123456789abcdef\"\n    scopes: [billing]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"serve", "--config", cfgPath}, &out, &errb); code != 3 {
		t.Fatalf("serve on an empty schema: exit %d, stderr %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "pvebill migrate") {
		t.Fatalf("refusal does not name the fix: %s", errb.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"migrate", "--config", cfgPath}, &out, &errb); code != 0 || !strings.Contains(out.String(), "applied 0001_init") {
		t.Fatalf("migrate: %d %s %s", code, out.String(), errb.String())
	}
	_, serr, _, _ := startCmd(t, "serve", "--config", cfgPath)
	addr := waitFor(t, serr, listenRE, 10*time.Second)[1]
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("readyz %d", resp.StatusCode)
	}
}

func TestConfigErrorNamesKeyAndFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(p, []byte("log_format: xml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--config", p}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "log_format") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if code := run(context.Background(), []string{"nope"}, &out, &errb); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
}

func TestSimCommandServesTheDemoCluster(t *testing.T) {
	out, _, _, _ := startCmd(t, "sim", "--listen", "127.0.0.1:0")
	addr := waitFor(t, out, regexp.MustCompile(`http://([0-9.]+:[0-9]+)/api2/json`), 10*time.Second)[1]
	req, _ := http.NewRequest("GET", "http://"+addr+"/api2/json/cluster/resources?type=vm", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+demoTokenID+"="+demoTokenSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || len(body.Data) == 0 {
		t.Fatalf("%d %v %v", resp.StatusCode, body, err)
	}
}

// The compose file is valid (checked without an engine when docker-compose is installed).
func TestComposeFileIsValid(t *testing.T) {
	bin, args := "", []string{}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		bin, args = p, []string{"-f", "docker/compose.yaml", "config", "-q"}
	} else if p, err := exec.LookPath("docker"); err == nil && exec.Command(p, "compose", "version").Run() == nil {
		bin, args = p, []string{"compose", "-f", "docker/compose.yaml", "config", "-q"}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no docker compose in CI (.ci/run installs docker-compose)")
		}
		t.Skip("docker compose is not installed")
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("compose config: %v\n%s", err, out)
	}
}
