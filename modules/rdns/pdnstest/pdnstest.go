// Package pdnstest starts a real PowerDNS authoritative server for tests: Debian's pdns_server
// with the gsqlite3 backend, its database created from the schema the package ships, DNS and
// the HTTP API on loopback ports, and a random API key.
package pdnstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
)

// Paths of Debian's packages pdns-server and pdns-backend-sqlite3.
var (
	Binary = "/usr/sbin/pdns_server"
	Schema = "/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql"
)

// Server is a running PowerDNS.
type Server struct {
	URL    string // the API's base URL
	APIKey string
	DNS    string // host:port of the DNS listener
}

// Start runs pdns_server until the test ends. Without it the test is skipped, unless CI is set.
func Start(t *testing.T) *Server {
	t.Helper()
	for _, p := range []string{Binary, Schema} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("PowerDNS is required in CI: %s: %v", p, err)
			}
			t.Skipf("PowerDNS is not installed (%s missing): apt-get install pdns-server pdns-backend-sqlite3", p)
		}
	}
	dir := t.TempDir()
	createDB(t, filepath.Join(dir, "pdns.db"))
	key := randomKey(t)
	// The ports are found free and then handed to pdns_server: another process may take one in
	// between, and pdns_server then exits. A start whose server exits before it answers is made
	// again on new ports.
	var lastLog []byte
	for attempt := 0; attempt < startAttempts; attempt++ {
		s, ok, log := launch(t, dir, key)
		if ok {
			return s
		}
		lastLog = log
	}
	t.Fatalf("PowerDNS did not start in %d attempts:\n%s", startAttempts, lastLog)
	return nil
}

// startAttempts bounds the starts of pdns_server on fresh ports.
const startAttempts = 3

// launch runs pdns_server on fresh loopback ports until the test ends and waits until its API
// answers. ok is false, with the server's log, when it exited or did not answer within 30 s.
func launch(t *testing.T, dir, key string) (*Server, bool, []byte) {
	t.Helper()
	dnsPort, apiPort := freePort(t, "udp"), freePort(t, "tcp")
	conf := strings.Join([]string{"launch=gsqlite3", "gsqlite3-database=" + filepath.Join(dir, "pdns.db"),
		"local-address=127.0.0.1", fmt.Sprintf("local-port=%d", dnsPort), "api=yes", "api-key=" + key,
		"webserver=yes", "webserver-address=127.0.0.1", fmt.Sprintf("webserver-port=%d", apiPort),
		"webserver-allow-from=127.0.0.1", "socket-dir=" + dir, "guardian=no", "daemon=no", "disable-syslog=yes"}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), []byte(conf+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "pdns.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Binary, "--config-dir="+dir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { cancel(); <-exited; log.Close() }
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", apiPort), APIKey: key, DNS: fmt.Sprintf("127.0.0.1:%d", dnsPort)}
	if !s.waitReady(t, exited) {
		stop()
		out, _ := os.ReadFile(logPath)
		return nil, false, out
	}
	t.Cleanup(stop)
	return s, true, nil
}

// waitReady waits until the API answers (true), the server exits or 30 s pass (false).
func (s *Server) waitReady(t *testing.T, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/api/v1/servers/localhost", nil)
		req.Header.Set("X-API-Key", s.APIKey)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-tick.C:
		}
	}
	return false
}

// CreateZone creates a native zone (with a trailing dot) through the API.
func (s *Server) CreateZone(t *testing.T, zone string) {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"kind":"Native","nameservers":[]}`, strings.TrimSuffix(zone, ".")+".")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/api/v1/servers/localhost/zones", strings.NewReader(body))
	req.Header.Set("X-API-Key", s.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create zone %s: %s", zone, res.Status)
	}
}

// Resolver asks this server's DNS listener.
func (s *Server) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.DNS)
	}}
}

func createDB(t *testing.T, path string) {
	t.Helper()
	schema, err := os.ReadFile(Schema)
	if err != nil {
		t.Fatal(err)
	}
	db, err := gorm.Open(sqlite.Open(path), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(string(schema)).Error; err != nil {
		t.Fatalf("PowerDNS schema: %v", err)
	}
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
}

func randomKey(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// freePort finds a loopback port free for network ("udp" or "tcp").
func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp" {
		c, err := (&net.ListenConfig{}).ListenPacket(t.Context(), "udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
