package pve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/modules/pve/pvesim"
)

// fakeClock is the console login's clock in these tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func consoleConfig(u string) Config {
	cfg := testConfig(u)
	cfg.ConsoleUser, cfg.ConsolePassword = pvesim.DefaultConsoleUser, pvesim.DefaultConsolePassword
	return cfg
}

func newConsoleSim(t *testing.T) (*pvesim.Sim, *httptest.Server) {
	t.Helper()
	sim := pvesim.Demo(pvesim.Options{TokenID: testTokenID, TokenSecret: testSecret})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

func logins(sim *pvesim.Sim) int {
	n := 0
	for _, r := range sim.Requests() {
		if r.Path == "/access/ticket" && r.Status == 200 {
			n++
		}
	}
	return n
}

// concurrently runs n Termproxy calls at once and fails on any error.
func concurrently(t *testing.T, c *Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := c.Termproxy(testContext(t), "pve1", 200); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// R41: The console user logs in once for any number of concurrent calls; at the renewal age it logs
// in again, once; a ticket Proxmox refuses (here: expired on the cluster's clock) is replaced
// by one login and the call succeeds.
func TestConsoleTicketRenewal(t *testing.T) {
	sim, srv := newConsoleSim(t)
	c := newTestClient(t, consoleConfig(srv.URL), nil)
	clk := &fakeClock{t: time.Now()}
	c.console.now = clk.now
	concurrently(t, c, 20)
	if n := logins(sim); n != 1 {
		t.Fatalf("%d logins for 20 concurrent calls, want 1", n)
	}
	clk.advance(DefaultConsoleTicketRenew - time.Minute)
	concurrently(t, c, 5)
	if n := logins(sim); n != 1 {
		t.Fatalf("%d logins before the renewal age, want 1", n)
	}
	clk.advance(2 * time.Minute)
	concurrently(t, c, 20)
	if n := logins(sim); n != 2 {
		t.Fatalf("%d logins after the renewal age, want 2", n)
	}
	sim.Advance(pvesim.DefaultTicketLifetime + time.Minute)
	concurrently(t, c, 20)
	if n := logins(sim); n != 3 {
		t.Fatalf("%d logins after Proxmox refused the ticket, want 3", n)
	}
	var refused int
	for _, r := range sim.Requests() {
		if r.Status == 401 {
			refused++
		}
	}
	if refused == 0 || refused > 20 {
		t.Fatalf("%d refused calls", refused)
	}
	noConsole := newTestClient(t, testConfig(srv.URL), nil)
	if _, err := noConsole.Termproxy(testContext(t), "pve1", 200); !errors.Is(err, ErrNoConsoleUser) {
		t.Fatalf("without a console user: %v", err)
	}
}

// R41: The console password, the ticket and the vncticket appear in no error, config rendering or
// structured log.
func TestConsoleSecretsStayOut(t *testing.T) {
	sim, srv := newConsoleSim(t)
	ctx := testContext(t)
	bad := consoleConfig(srv.URL)
	bad.ConsolePassword = "wrong-" + pvesim.DefaultConsolePassword
	_, loginErr := newTestClient(t, bad, nil).Termproxy(ctx, "pve1", 200)
	if !errors.Is(loginErr, ErrAuth) {
		t.Fatalf("wrong password: %v", loginErr)
	}
	c := newTestClient(t, consoleConfig(srv.URL), nil)
	p, err := c.Termproxy(ctx, "pve1", 200)
	if err != nil {
		t.Fatal(err)
	}
	c.console.mu.Lock()
	ticket := c.console.ticket
	c.console.mu.Unlock()
	forged := p
	forged.Ticket = strings.Replace(p.Ticket, "::", "::x", 1)
	_, dialErr := c.DialConsole(ctx, "pve1", "lxc", 200, forged)
	if !errors.Is(dialErr, ErrConsoleRefused) || !strings.Contains(dialErr.Error(), "HTTP 403") {
		t.Fatalf("forged vncticket: %v", dialErr)
	}
	_, vmErr := c.Vncproxy(ctx, "pve1", 300) // stopped
	if vmErr == nil {
		t.Fatal("vncproxy of a stopped VM succeeded")
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cluster", "config", bad, "proxy", p)
	texts := []string{loginErr.Error(), dialErr.Error(), vmErr.Error(), buf.String(), bad.String(), fmt.Sprintf("%#v %v", bad, p)}
	for _, text := range texts {
		for _, secret := range []string{bad.ConsolePassword, pvesim.DefaultConsolePassword, ticket.ticket, ticket.csrf, p.Ticket, forged.Ticket} {
			if strings.Contains(text, secret) {
				t.Fatalf("secret %q in %q", secret, text)
			}
		}
	}
	if !strings.Contains(buf.String(), pvesim.DefaultConsoleUser) {
		t.Fatalf("log %s does not name the console user", buf.String())
	}
	if len(sim.SchemaViolations()) != 0 {
		t.Fatal(sim.SchemaViolations())
	}
}

// R41: The console WebSocket goes over the client's transport: with a pinned fingerprint the upgrade
// reaches a server whose self-signed certificate no system store trusts.
func TestConsoleDialHonoursTLSPin(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: testTokenID, TokenSecret: testSecret})
	srv := httptest.NewTLSServer(sim)
	defer srv.Close()
	ctx := testContext(t)
	cfg := consoleConfig(srv.URL)
	cfg.Fingerprint = fingerprintOf(srv.Certificate().Raw)
	conn, err := newTestClient(t, cfg, nil).OpenTerminal(ctx, "pve1", 200)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "0:9:hostname\r"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	cfg.Fingerprint = strings.Repeat("AB:", 31) + "AB"
	_, err = newTestClient(t, cfg, nil).OpenTerminal(ctx, "pve1", 200)
	if !errors.Is(err, ErrTLS) {
		t.Fatalf("wrong pin: %v", err)
	}
}

// R41: HasConsoleUser says whether the cluster has a console user; without one a console call is
// ErrNoConsoleUser and nothing reaches Proxmox (no login, no termproxy).
func TestHasConsoleUser(t *testing.T) {
	sim, srv := newConsoleSim(t)
	with, err := New(consoleConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	without, err := New(testConfig(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer without.Close()
	if !with.HasConsoleUser() || without.HasConsoleUser() {
		t.Fatalf("HasConsoleUser: with %t, without %t", with.HasConsoleUser(), without.HasConsoleUser())
	}
	if _, err := without.Termproxy(testContext(t), "pve1", 200); !errors.Is(err, ErrNoConsoleUser) {
		t.Fatalf("termproxy without a console user: %v", err)
	}
	if n := len(sim.Requests()); n != 0 {
		t.Fatalf("%d requests reached Proxmox: %+v", n, sim.Requests())
	}
}
