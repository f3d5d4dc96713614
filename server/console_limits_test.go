package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server/config"
)

// consoleOpens counts the requests that opened a console at Proxmox (termproxy, vncproxy).
func consoleOpens(reqs []pvesim.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Method == http.MethodPost && (strings.HasSuffix(r.Path, "/termproxy") || strings.HasSuffix(r.Path, "/vncproxy")) {
			n++
		}
	}
	return n
}

// R41: the page's Origin is checked before the token is used. A WebSocket opened from another
// site's page is 403 (problem+json forbidden for a program, a page for a browser) and sends
// nothing to Proxmox: no request at all reaches the simulator. The same token then opens from
// the console's own origin and reaches the guest's shell.
func TestConsoleOriginCheckedBeforeTheToken(t *testing.T) {
	h := newConsoleHarness(t, "sqlite", 0)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("con-origin", "ct-1g")))
	url := h.openConsole(t, "con-origin", "", "terminal")
	before := len(h.sim.Requests())
	hdr := upgrade(http.Header{"Origin": {"https://attacker.example"}, "Accept": {"application/json"}})
	p := checkProblem(t, get(t, url+"/ws", hdr), http.StatusForbidden, "forbidden")
	if p["reason"] != "foreign_origin" {
		t.Errorf("refusal %v", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", &websocket.DialOptions{
		Subprotocols: []string{"binary"}, HTTPHeader: http.Header{"Origin": {"http://evil.example:8080"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a browser on another site opened the console: %v %v", resp, err)
	}
	if reqs := h.sim.Requests()[before:]; len(reqs) != 0 {
		t.Fatalf("a refused origin reached Proxmox: %+v", reqs)
	}
	if v := metricValue(t, h.reg, "pvebill_console_refused_total", "reason", "foreign_origin"); v != 2 {
		t.Errorf("refused{foreign_origin} %v", v)
	}
	c, _, err := dialConsole(t, url)
	if err != nil {
		t.Fatalf("the token did not open from the console's origin after the refusals: %v", err)
	}
	defer func() { _ = c.CloseNow() }()
	readUntil(t, c, ":~# ")
	if n := consoleOpens(h.sim.Requests()[before:]); n != 1 {
		t.Errorf("%d consoles opened at Proxmox, want 1", n)
	}
}

// openSessions reads the sessions open now for a client's service and for the client.
func openSessions(t *testing.T, db *models.DB, client, serviceID string) (int64, int64) {
	t.Helper()
	var ref int64
	dbtest.Scan(t, db, &ref, "SELECT id FROM services WHERE client_id = ? AND service_id = ?", client, serviceID)
	svc, cl, err := db.OpenConsoleSessions(t.Context(), client, ref, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return svc, cl
}

// R41: console sessions are bounded per service and per client, across replicas, on both
// databases. With console.max_sessions_per_service 2 and console.max_sessions_per_client 3,
// two sessions of one service open on two replicas; a third URL is then refused on either
// replica (429 console_session_limit, temporary, translated), and a URL handed out before is
// refused at its WebSocket (429) without a console opened at Proxmox, its token left usable:
// once a session closed, it opens. One more session of another service reaches the client's
// limit; the other client's service is not counted.
func TestConsoleSessionLimits(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbA, dbB := replicaDatabases(t, d)
			sim := simtest.Start(t, nil)
			cc := &config.Console{Secret: consoleSecret, MaxSessionsPerService: 2, MaxSessionsPerClient: 3}
			// The production lease (30 s), not the tests' 5 s: two replicas writing to one SQLite
			// file under -race can hold a heartbeat past 5 s, and a create taken over by the
			// replica without its password fails interrupted, which is not what this test is about.
			lease := func(o *stack.Options) { o.Executor.Lease = config.Defaults().Executor.Lease }
			a := newServicesReplica(t, dbA, sim, cc, "replica-a", true, lease)
			b := newServicesReplica(t, dbB, sim, cc, "replica-b", false, lease)
			b.advance(-30 * time.Second) // B signs apart from A: the same request is no replay (R47)
			for _, id := range []string{"lim-1", "lim-2"} {
				succeeded(t, a.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
			}
			succeeded(t, a.otherClient("POST", "/v1/services?wait=20", createBody("lim-1", "ct-1g")))
			u1, u2, u3 := a.openConsole(t, "lim-1", "", "terminal"), a.openConsole(t, "lim-1", "", "terminal"),
				b.openConsole(t, "lim-1", "", "terminal")
			onB := func(u string) string { return b.http.URL + u[strings.Index(u, "/console/"):] }
			var conns []*websocket.Conn
			for _, u := range []string{u1, onB(u2)} {
				c, _, err := dialConsole(t, u)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
				readUntil(t, c, ":~# ")
			}
			defer func() {
				for _, c := range conns {
					_ = c.CloseNow()
				}
			}()
			if s, c := openSessions(t, dbA, "whmcs", "lim-1"); s != 2 || c != 2 {
				t.Fatalf("%d sessions of the service, %d of the client open, want 2, 2", s, c)
			}
			for _, h := range []*svcHarness{a, b} {
				r := h.billing("POST", "/v1/services/lim-1/console", nil, withHeader("Accept-Language", "nl"))
				p := checkProblem(t, r, http.StatusTooManyRequests, "console_session_limit")
				if p["permanence"] != "temporary" || p["detail"] != i18n.T("nl", "error.console_session_limit", nil) {
					t.Errorf("refusal %v", p)
				}
			}
			before := consoleOpens(sim.Requests())
			ws := get(t, u3+"/ws", upgrade(http.Header{"Accept": {"application/json"}, "Origin": {b.http.URL}}))
			if p := checkProblem(t, ws, http.StatusTooManyRequests, "console_session_limit"); p["permanence"] != "temporary" {
				t.Errorf("refusal %v", p)
			}
			if page := get(t, u3, nil); page.Status != http.StatusOK {
				t.Fatalf("the refused token's page: %d (the token was used)", page.Status)
			}
			if n := consoleOpens(sim.Requests()) - before; n != 0 {
				t.Fatalf("a refused session opened %d consoles at Proxmox", n)
			}
			// A refused the POST; B the POST and the WebSocket.
			if va, vb := metricValue(t, a.reg, "pvebill_console_refused_total", "reason", "session_limit"),
				metricValue(t, b.reg, "pvebill_console_refused_total", "reason", "session_limit"); va != 1 || vb != 2 {
				t.Errorf("refused{session_limit} on A %v, on B %v", va, vb)
			}
			// A session closed makes room, on any replica: the refused token now opens.
			_ = conns[0].Close(websocket.StatusNormalClosure, "")
			var open int64
			if !poll.Wait(5*time.Second, func() bool { open, _ = openSessions(t, dbA, "whmcs", "lim-1"); return open == 1 }) {
				t.Fatalf("the closed session still counts: %d open", open)
			}
			c3, _, err := dialConsole(t, onB(u3))
			if err != nil {
				t.Fatalf("the token refused for the limit did not open later: %v", err)
			}
			conns = append(conns, c3)
			readUntil(t, c3, ":~# ")
			// The client's third session, of another service, is its last.
			c4, _, err := dialConsole(t, a.openConsole(t, "lim-2", "", "terminal"))
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c4)
			readUntil(t, c4, ":~# ")
			checkProblem(t, b.billing("POST", "/v1/services/lim-2/console", nil), http.StatusTooManyRequests, "console_session_limit")
			if s, c := openSessions(t, dbA, "whmcs", "lim-2"); s != 1 || c != 3 {
				t.Fatalf("%d sessions of lim-2, %d of the client open, want 1, 3", s, c)
			}
			r := a.otherClient("POST", "/v1/services/lim-1/console", nil)
			if r.Status != http.StatusCreated {
				t.Fatalf("the other client's console: %d %s", r.Status, r.Body)
			}
		})
	}
}
