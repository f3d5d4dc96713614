package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/console"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server/config"
)

const consoleSecret = "console-secret-0123456789abcdef-0123456789"

// The console's pages are HTML, which the contract tests read as plain text.
func init() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder) }

// consoleClient is the simulator's client that also logs in as its console user.
func consoleClient(t *testing.T, sim *simtest.Server) *pve.Client {
	t.Helper()
	c, err := pve.New(pve.Config{Cluster: "default", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		ConsoleUser: simtest.ConsoleUser, ConsolePassword: simtest.ConsolePassword,
		Timeout: 5 * time.Second, RetryBaseDelay: time.Millisecond, RetryMaxDelay: 4 * time.Millisecond,
		TaskPollInterval: time.Millisecond, TaskPollMaxInterval: 10 * time.Millisecond}, pve.NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newConsoleHarness(t *testing.T, dialect string, maxSession time.Duration) *svcHarness {
	t.Helper()
	return newServicesHarnessWith(t, dialect, &config.Console{Secret: consoleSecret, MaxSession: maxSession})
}

// openConsole asks for a console URL and returns it, checking the answer's shape.
func (h *svcHarness) openConsole(t *testing.T, id, body, kind string) string {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	r := h.billing("POST", "/v1/services/"+id+"/console", b)
	if r.Status != http.StatusCreated {
		t.Fatalf("console: %d %s", r.Status, r.Body)
	}
	c, _ := r.json(t)["console"].(map[string]any)
	url, _ := c["url"].(string)
	exp, err := time.Parse(time.RFC3339, c["expires_at"].(string))
	if c["kind"] != kind || !strings.HasPrefix(url, h.http.URL+"/console/") || err != nil ||
		exp.Before(time.Now().Add(50*time.Second)) || exp.After(time.Now().Add(61*time.Second)) {
		t.Fatalf("console answer %s", r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	return url
}

// dialConsole opens a console URL's WebSocket as the page does.
func dialConsole(t *testing.T, url string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws",
		&websocket.DialOptions{Subprotocols: []string{"binary"}, HTTPHeader: http.Header{"Origin": {strings.SplitN(url, "/console/", 2)[0]}}})
	if c != nil {
		c.SetReadLimit(1 << 24)
	}
	return c, resp, err
}

// readUntil reads messages until their text contains want.
func readUntil(t *testing.T, c *websocket.Conn, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var all strings.Builder
	for !strings.Contains(all.String(), want) {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, all.String())
		}
		all.Write(msg)
	}
	return all.String()
}

func termInput(s string) []byte { return []byte("0:" + strconv.Itoa(len(s)) + ":" + s) }

// checkOneStatusRead fails unless opening a console's WebSocket read the guest's status once:
// the guest is located, then the kind checks its stamp and that it runs in one read.
func checkOneStatusRead(t *testing.T, reqs []pvesim.Request) {
	t.Helper()
	n := 0
	for _, r := range reqs {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/status/current") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("opening the console read the guest's status %d times, want 1", n)
	}
}

// A container's console through pvebill (R41), on both databases: the URL's page loads
// without using the token, its WebSocket reaches the guest's terminal in the simulator (typed
// `hostname` answers the guest's name), a second open is 410 console_expired on any route, the
// page of a used token is the 410 page in the visitor's language, and neither the page nor the
// relayed stream nor the database carries the Proxmox ticket or the token.
func TestConsoleTerminalOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newConsoleHarness(t, dialect, 0)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("con-ct", "ct-1g")))
			url := h.openConsole(t, "con-ct", "", "terminal")
			page := get(t, url, nil)
			if page.Status != 200 || !strings.Contains(string(page.Body), "assets/app/terminal.js") ||
				!strings.HasPrefix(page.Header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self';") ||
				page.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Fatalf("page %d %v %s", page.Status, page.Header, page.Body)
			}
			if p := get(t, url+"/ws", nil); p.Status != http.StatusUpgradeRequired {
				t.Fatalf("a plain GET of the WebSocket: %d %s", p.Status, p.Body)
			}
			before := len(h.sim.Requests())
			c, _, err := dialConsole(t, url)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.CloseNow() }()
			ctx := context.Background()
			seen := readUntil(t, c, ":~# ")
			checkOneStatusRead(t, h.sim.Requests()[before:])
			if err := c.Write(ctx, websocket.MessageBinary, []byte("1:80:24:")); err != nil {
				t.Fatal(err)
			}
			if err := c.Write(ctx, websocket.MessageBinary, termInput("hostname\r")); err != nil {
				t.Fatal(err)
			}
			seen += readUntil(t, c, "web1.example.com\r\n")
			if strings.Contains(seen, "PVE:") || strings.Contains(string(page.Body), "PVE:") {
				t.Errorf("a Proxmox ticket reached the browser: %q", seen)
			}
			checkSecondOpenRefused(t, url)
			checkConsoleRows(t, h, url)
			if v := metricValue(t, h.reg, "pvebill_console_sessions_opened_total", "kind", "terminal"); v != 1 {
				t.Errorf("opened_total %v", v)
			}
			if v := metricValue(t, h.reg, "pvebill_console_refused_total", "reason", "used"); v != 2 {
				t.Errorf("refused{used} %v, want 2 (the second open)", v)
			}
		})
	}
}

// checkSecondOpenRefused: a used token's WebSocket is 410 (problem+json console_expired when
// the caller accepts JSON) and its page the 410 page in the visitor's language.
func checkSecondOpenRefused(t *testing.T, url string) {
	t.Helper()
	if _, resp, err := dialConsole(t, url); err == nil || resp == nil || resp.StatusCode != http.StatusGone {
		t.Fatalf("second open: %v %v", resp, err)
	}
	ws := get(t, url+"/ws", upgrade(http.Header{"Accept": {"application/json"}, "Accept-Language": {"fr"}}))
	checkProblem(t, ws, http.StatusGone, "console_expired")
	if !strings.Contains(string(ws.Body), "Ce lien de console") {
		t.Errorf("detail not in French: %s", ws.Body)
	}
	page := get(t, url, http.Header{"Accept-Language": {"de-DE,de;q=0.9,en;q=0.5"}})
	if page.Status != http.StatusGone || page.Header.Get("Content-Language") != "de" ||
		!strings.Contains(string(page.Body), "Dieser Konsolen-Link ist nicht mehr gültig") || !strings.Contains(string(page.Body), `lang="de"`) {
		t.Fatalf("used page: %d %v %s", page.Status, page.Header, page.Body)
	}
}

// checkConsoleRows: the database holds the token's nonce and its service, never the token
// (nor the URL); the idempotency table kept no console answer.
func checkConsoleRows(t *testing.T, h *svcHarness, url string) {
	t.Helper()
	token := url[strings.LastIndex(url, "/")+1:]
	var rows []models.ConsoleClaim
	dbtest.Scan(t, h.db, &rows, "SELECT * FROM console_claims")
	if len(rows) != 1 || len(rows[0].Nonce) != 16 || rows[0].ServiceRef == 0 {
		t.Fatalf("claims %+v", rows)
	}
	for _, table := range []string{"console_claims", "idempotency_keys", "operations", "services", "audit_log"} {
		var dump []map[string]any
		if err := dbtest.Query(h.db, &dump, "SELECT * FROM "+table); err != nil {
			continue
		}
		for _, row := range dump {
			for col, v := range row {
				if s, ok := v.(string); ok && (strings.Contains(s, token) || strings.Contains(s, "PVE:")) {
					t.Errorf("%s.%s holds the token or a ticket", table, col)
				}
				if b, ok := v.([]byte); ok && (bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte("PVE:"))) {
					t.Errorf("%s.%s holds the token or a ticket", table, col)
				}
			}
		}
	}
}

// upgrade adds a WebSocket upgrade's headers to hdr.
func upgrade(hdr http.Header) http.Header {
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Connection", "Upgrade")
	hdr.Set("Upgrade", "websocket")
	hdr.Set("Sec-WebSocket-Version", "13")
	hdr.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	return hdr
}

func get(t *testing.T, url string, hdr http.Header) response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func metricValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("%s{%s=%q} not found", name, label, value)
	return 0
}

// A VM's console (R41): terminal is refused with 422, the default is vnc; the relay greets
// the browser with RFB 3.8 and the security type None (the VNC password stays in pvebill), and
// the ServerInit that follows is the simulator's screen, named after the guest.
func TestConsoleVNCOverHTTP(t *testing.T) {
	h := newConsoleHarness(t, "sqlite", 0)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("con-vm", "vm-2g")))
	r := h.billing("POST", "/v1/services/con-vm/console", []byte(`{"kind":"terminal"}`))
	checkProblem(t, r, http.StatusUnprocessableEntity, "validation_failed")
	url := h.openConsole(t, "con-vm", `{"kind":"vnc"}`, "vnc")
	if p := get(t, url, nil); p.Status != 200 || !strings.Contains(string(p.Body), "assets/app/vnc.js") {
		t.Fatalf("page %d %s", p.Status, p.Body)
	}
	c, _, err := dialConsole(t, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc := websocket.NetConn(ctx, c, websocket.MessageBinary)
	ver := make([]byte, 12)
	if _, err := io.ReadFull(nc, ver); err != nil || string(ver) != "RFB 003.008\n" {
		t.Fatalf("version %q %v", ver, err)
	}
	_, _ = nc.Write(ver)
	types := make([]byte, 2)
	if _, err := io.ReadFull(nc, types); err != nil || types[0] != 1 || types[1] != 1 {
		t.Fatalf("security types %v %v (want only None)", types, err)
	}
	_, _ = nc.Write([]byte{1})
	res := make([]byte, 4)
	if _, err := io.ReadFull(nc, res); err != nil || binary.BigEndian.Uint32(res) != 0 {
		t.Fatalf("security result %v %v", res, err)
	}
	_, _ = nc.Write([]byte{1}) // ClientInit, shared
	init := make([]byte, 24)
	if _, err := io.ReadFull(nc, init); err != nil {
		t.Fatal(err)
	}
	name := make([]byte, binary.BigEndian.Uint32(init[20:24]))
	if _, err := io.ReadFull(nc, name); err != nil || string(name) != "web1.example.com" {
		t.Fatalf("ServerInit %dx%d name %q %v", binary.BigEndian.Uint16(init[0:2]), binary.BigEndian.Uint16(init[2:4]), name, err)
	}
}

// Refusals (R41): another client's service is 404; a suspended one 409 service_suspended; a
// forged, expired or foreign-key token is the 410 page and opens nothing in the simulator; the
// console off (no console.secret, no console user) is 409 capability_refused, permanent.
func TestConsoleRefusals(t *testing.T) {
	h := newConsoleHarness(t, "sqlite", 0)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("con-ref", "ct-1g")))
	checkProblem(t, h.signed("POST", "/v1/services/con-ref/console", "other", otherSecret, nil), http.StatusNotFound, "not_found")
	checkProblem(t, h.billing("POST", "/v1/services/con-ref/console", []byte(`{"kind":"serial"}`)), http.StatusUnprocessableEntity, "validation_failed")
	var ref int64
	dbtest.Scan(t, h.db, &ref, "SELECT id FROM services WHERE service_id = ?", "con-ref")
	tk := console.NewTokens(consoleSecret)
	expired := console.Grant{ServiceRef: ref, ClientID: "whmcs", Kind: console.KindTerminal, Expires: time.Now().Add(-time.Second)}
	forged := console.Grant{ServiceRef: ref, ClientID: "whmcs", Kind: console.KindTerminal, Expires: time.Now().Add(time.Minute)}
	foreign := forged
	foreign.ClientID = "other"
	before := len(h.sim.Requests())
	for name, g := range map[string]console.Grant{"expired": expired, "foreign client": foreign} {
		tok, _ := tk.Issue(&g)
		if p := get(t, h.http.URL+"/console/"+tok+"/ws", upgrade(nil)); p.Status != http.StatusGone || !strings.Contains(string(p.Body), "<html") {
			t.Errorf("%s: %d %s", name, p.Status, p.Body)
		}
	}
	other, _ := console.NewTokens(strings.Repeat("x", 40)).Issue(&forged)
	for _, path := range []string{"/console/" + other, "/console/" + other + "/ws", "/console/not-a-token"} {
		if p := get(t, h.http.URL+path, upgrade(nil)); p.Status != http.StatusGone {
			t.Errorf("%s: %d", path, p.Status)
		}
	}
	for _, r := range h.sim.Requests()[before:] {
		if strings.Contains(r.Path, "vnc") || strings.Contains(r.Path, "termproxy") || strings.Contains(r.Path, "ticket") {
			t.Errorf("a refused token reached Proxmox: %s %s", r.Method, r.Path)
		}
	}
	succeeded(t, h.billing("POST", "/v1/services/con-ref/suspend?wait=20", nil))
	p := checkProblem(t, h.billing("POST", "/v1/services/con-ref/console", nil, withHeader("Accept-Language", "de")), http.StatusConflict, "service_suspended")
	if d, _ := p["detail"].(string); d != i18n.T("de", "error.service_suspended", map[string]string{"state": "suspended"}) {
		t.Errorf("detail %q", d)
	}
	if v := metricValue(t, h.reg, "pvebill_console_refused_total", "reason", "suspended"); v != 1 {
		t.Errorf("refused{suspended} %v", v)
	}

	off := newServicesHarness(t, "sqlite")
	succeeded(t, off.billing("POST", "/v1/services?wait=20", createBody("con-off", "ct-1g")))
	if p := checkProblem(t, off.billing("POST", "/v1/services/con-off/console", nil), http.StatusConflict, "capability_refused"); p["permanence"] != "permanent" {
		t.Errorf("console off: %v", p)
	}
}

// waitMetric waits up to 3 s for a series to reach want (the server records a session's end
// just after the close handshake) and returns its last value.
func waitMetric(t *testing.T, reg *prometheus.Registry, name, label, value string, want float64) float64 {
	t.Helper()
	var v float64
	poll.Wait(3*time.Second, func() bool { v = metricValue(t, reg, name, label, value); return v == want })
	return v
}

// waitClose waits for the server to close a console WebSocket and returns its close code.
func waitClose(t *testing.T, c *websocket.Conn, within time.Duration) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("still open after %s", within)
		}
		return websocket.CloseStatus(err)
	}
}

// R41: a session ends at once when its service is suspended here (the executor's signal, well
// before the database re-check), within the re-check when another replica changes the service
// (the row is changed directly), and at console.max_session; each with its close code, counted
// by reason, and the simulator's console session is gone each time.
func TestConsoleSessionEnds(t *testing.T) {
	h := newConsoleHarness(t, "sqlite", 0)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("con-end", "ct-1g")))
	c, _, err := dialConsole(t, h.openConsole(t, "con-end", "", "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, c, ":~# ")
	start := time.Now()
	r := h.billing("POST", "/v1/services/con-end/suspend", nil)
	if r.Status != http.StatusAccepted && r.Status != http.StatusOK {
		t.Fatalf("suspend %d %s", r.Status, r.Body)
	}
	if code := waitClose(t, c, 2*time.Second); code != 4001 {
		t.Fatalf("close code %d, want 4001", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("in-process end took %s", d)
	}
	succeeded(t, h.billing("POST", "/v1/services/con-end/unsuspend?wait=20", nil))
	c2, _, err := dialConsole(t, h.openConsole(t, "con-end", "", "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, c2, ":~# ")
	dbtest.Exec(t, h.db, "UPDATE services SET state = 'limited' WHERE service_id = 'con-end'")
	if code := waitClose(t, c2, 5*time.Second); code != 4001 {
		t.Fatalf("close code %d, want 4001", code)
	}
	if v := waitMetric(t, h.reg, "pvebill_console_sessions_ended_total", "reason", "service_changed", 2); v != 2 {
		t.Errorf("ended{service_changed} %v", v)
	}
	poll.Wait(3*time.Second, func() bool { return h.sim.OpenConsoles() == 0 })
	if n := h.sim.OpenConsoles(); n != 0 {
		t.Errorf("%d console sessions left open in the simulator", n)
	}

	short := newConsoleHarness(t, "sqlite", 700*time.Millisecond)
	succeeded(t, short.billing("POST", "/v1/services?wait=20", createBody("con-max", "ct-1g")))
	c3, _, err := dialConsole(t, short.openConsole(t, "con-max", "", "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	if code := waitClose(t, c3, 3*time.Second); code != 4000 {
		t.Fatalf("close code %d, want 4000", code)
	}
	if v := waitMetric(t, short.reg, "pvebill_console_sessions_open", "kind", "terminal", 0); v != 0 {
		t.Errorf("sessions_open %v after the end", v)
	}
	if v := metricValue(t, short.reg, "pvebill_console_sessions_ended_total", "reason", "max_session"); v != 1 {
		t.Errorf("ended{max_session} %v", v)
	}
}
