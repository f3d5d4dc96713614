package pvesim

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// login logs the console user in and returns the ticket and CSRF token.
func (h *harness) login() (ticket, csrf string) {
	h.t.Helper()
	r := h.doAuth("POST", "/access/ticket", vals("username", DefaultConsoleUser, "password", DefaultConsolePassword), "")
	var out struct {
		Ticket   string `json:"ticket"`
		CSRF     string `json:"CSRFPreventionToken"`
		Username string `json:"username"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Data, &out) != nil || out.Username != DefaultConsoleUser ||
		!strings.HasPrefix(out.Ticket, "PVE:"+DefaultConsoleUser+":") || out.CSRF == "" {
		h.t.Fatalf("login: %d %s", r.Status, r.Raw)
	}
	return out.Ticket, out.CSRF
}

// doTicket sends a request with a ticket cookie and, when given, the CSRF header.
func (h *harness) doTicket(method, path string, form url.Values, ticket, csrf string) (int, []byte) {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, h.srv.URL+apiPrefix+path, body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: authCookie, Value: ticket})
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

type proxyAnswer struct {
	Port   int    `json:"port"`
	Ticket string `json:"ticket"`
	User   string `json:"user"`
	UPID   string `json:"upid"`
	Cert   string `json:"cert"`
}

func (h *harness) termproxy(ticket, csrf string, vmid string) proxyAnswer {
	h.t.Helper()
	status, raw := h.doTicket("POST", "/nodes/pve1/lxc/"+vmid+"/termproxy", url.Values{}, ticket, csrf)
	var env struct{ Data proxyAnswer }
	if status != http.StatusOK || json.Unmarshal(raw, &env) != nil {
		h.t.Fatalf("termproxy: %d %s", status, raw)
	}
	return env.Data
}

// dial upgrades to a vncwebsocket and returns the status of the answer.
func (h *harness) dial(path string, p proxyAnswer, header http.Header, protocols ...string) (*websocket.Conn, int) {
	h.t.Helper()
	u := "ws" + strings.TrimPrefix(h.srv.URL, "http") + apiPrefix + path + "?" +
		url.Values{"port": {strconv.Itoa(p.Port)}, "vncticket": {p.Ticket}}.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: header, Subprotocols: protocols})
	if err != nil {
		if resp == nil {
			h.t.Fatalf("dial %s: %v", path, err)
		}
		return nil, resp.StatusCode
	}
	return c, http.StatusSwitchingProtocols
}

func cookie(ticket string) http.Header {
	return http.Header{"Cookie": {(&http.Cookie{Name: authCookie, Value: ticket}).String()}}
}

// R41: Like Proxmox, the console WebSocket refuses an API token (401) and a client without the
// subprotocol "binary" (400); it takes only the vncticket issued for its port, guest and user
// (403), and a termproxy started with a token names the token, so the console user's ticket
// cannot use it. The request log keeps no password or vncticket.
func TestConsoleSocketRefusals(t *testing.T) {
	h := demoHarness(t)
	ticket, csrf := h.login()
	path := "/nodes/pve1/lxc/200/vncwebsocket"
	p := h.termproxy(ticket, csrf, "200")
	if p.Port != 5900 || p.User != DefaultConsoleUser || !strings.HasPrefix(p.UPID, "UPID:pve1:") || !strings.Contains(p.UPID, ":vncproxy:200:") {
		t.Fatalf("termproxy answer %+v", p)
	}
	token := http.Header{"Authorization": {"PVEAPIToken=" + h.sim.opts.TokenID + "=" + h.sim.opts.TokenSecret}}
	if _, st := h.dial(path, p, token, "binary"); st != http.StatusUnauthorized {
		t.Fatalf("token: status %d, want 401", st)
	}
	if _, st := h.dial(path, p, cookie(ticket)); st != http.StatusBadRequest {
		t.Fatalf("no subprotocol: status %d, want 400", st)
	}
	if _, st := h.dial(path, p, cookie(ticket), "base64"); st != http.StatusBadRequest {
		t.Fatalf("base64 only: status %d, want 400", st)
	}
	wrong := p
	wrong.Ticket = strings.Replace(p.Ticket, "::", "::x", 1)
	if _, st := h.dial(path, wrong, cookie(ticket), "binary"); st != http.StatusForbidden {
		t.Fatalf("wrong vncticket: status %d, want 403", st)
	}
	if _, st := h.dial("/nodes/pve1/qemu/200/vncwebsocket", p, cookie(ticket), "binary"); st != http.StatusForbidden {
		t.Fatalf("other path: status %d, want 403", st)
	}
	var byToken proxyAnswer
	h.ok("POST", "/nodes/pve1/lxc/200/termproxy", url.Values{}, &byToken)
	if byToken.User != h.sim.opts.TokenID {
		t.Fatalf("termproxy by token names %q", byToken.User)
	}
	if _, st := h.dial(path, byToken, cookie(ticket), "binary"); st != http.StatusForbidden {
		t.Fatalf("token's vncticket with the user's cookie: status %d, want 403", st)
	}
	c, st := h.dial(path, p, cookie(ticket), "binary")
	if st != http.StatusSwitchingProtocols || c.Subprotocol() != "binary" {
		t.Fatalf("valid: status %d", st)
	}
	_ = c.CloseNow()
	if _, st := h.dial(path, p, cookie(ticket), "binary"); st != http.StatusForbidden {
		t.Fatalf("second client of one port: status %d, want 403", st)
	}
	var statuses []int
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		statuses = nil // the upgrade is logged once the handshake is answered: wait for it
		for _, r := range h.sim.Requests() {
			if strings.HasSuffix(r.Path, "/vncwebsocket") {
				statuses = append(statuses, r.Status)
			}
			if strings.Contains(r.Form.Encode(), DefaultConsolePassword) || strings.Contains(r.Form.Encode(), url.QueryEscape(p.Ticket)) {
				t.Fatalf("secret in the request log: %s %s", r.Path, r.Form.Encode())
			}
		}
		if len(statuses) >= 8 || time.Now().After(deadline) {
			break
		}
	}
	// The upgrade is logged when its session ends, which may be after the next refusal: the
	// refusals are checked in order, the one upgrade on its own.
	refusals := slices.DeleteFunc(slices.Clone(statuses), func(s int) bool { return s == http.StatusSwitchingProtocols })
	if want := []int{401, 400, 400, 403, 403, 403, 403}; !slices.Equal(refusals, want) || len(statuses) != len(want)+1 {
		t.Fatalf("logged statuses %v, want the refusals %v and one 101", statuses, want)
	}
	h.noViolations()
}

// R41: A ticket login needs the console user's password (or a valid ticket of it); its ticket allows
// only the console calls, writes need the CSRF token, and it expires after two hours of sim time.
func TestTicketLogin(t *testing.T) {
	h := demoHarness(t)
	if r := h.doAuth("POST", "/access/ticket", vals("username", DefaultConsoleUser, "password", "wrong"), ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", r.Status)
	}
	if r := h.doAuth("POST", "/access/ticket", vals("username", "root@pam", "password", DefaultConsolePassword), ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("other user: %d", r.Status)
	}
	ticket, csrf := h.login()
	if r := h.doAuth("POST", "/access/ticket", vals("username", DefaultConsoleUser, "password", ticket), ""); r.Status != http.StatusOK {
		t.Fatalf("renewal with the ticket: %d", r.Status)
	}
	if st, raw := h.doTicket("GET", "/nodes/pve1/lxc", nil, ticket, ""); st != http.StatusForbidden {
		t.Fatalf("console ticket listing containers: %d %s", st, raw)
	}
	if st, _ := h.doTicket("POST", "/nodes/pve1/lxc/200/termproxy", url.Values{}, ticket, ""); st != http.StatusUnauthorized {
		t.Fatalf("write without CSRF token: %d", st)
	}
	if st, raw := h.doTicket("POST", "/nodes/pve1/qemu/300/vncproxy", vals("websocket", "1"), ticket, csrf); st != http.StatusInternalServerError ||
		!strings.Contains(string(raw), "VM 300 not running") {
		t.Fatalf("vncproxy of a stopped VM: %d %s", st, raw)
	}
	h.sim.Advance(DefaultTicketLifetime + time.Second)
	if st, _ := h.doTicket("POST", "/nodes/pve1/lxc/200/termproxy", url.Values{}, ticket, csrf); st != http.StatusUnauthorized {
		t.Fatalf("expired ticket: %d", st)
	}
	for _, r := range h.sim.Requests() {
		if r.Path == "/access/ticket" && r.Form.Get("password") != "[redacted]" {
			t.Fatalf("password logged: %v", r.Form)
		}
	}
}

// R41: The terminal: "<user>:<ticket>\n" answered OK, input frames split across messages, a resize
// and a keep-alive, and the shell's answers.
func TestTerminalShell(t *testing.T) {
	h := demoHarness(t)
	ticket, csrf := h.login()
	p := h.termproxy(ticket, csrf, "200")
	c, st := h.dial("/nodes/pve1/lxc/200/vncwebsocket", p, cookie(ticket), "binary")
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("dial: %d", st)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn := websocket.NetConn(ctx, c, websocket.MessageBinary)
	defer conn.Close()
	in := bufio.NewReader(conn)
	for _, m := range []string{p.User + ":" + p.Ticket + "\n"} {
		if _, err := conn.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	readUntil(t, in, "OK"+"root@demo-ct:~# ")
	for _, m := range []string{"1:80:24:", "2", "0:5:ho", "stn", "0:4:ame\r", "0:10:echo a  b\r", "0:6:uname\r", "0:3:ls\r"} {
		if _, err := conn.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	readUntil(t, in, "hostname\r\ndemo-ct\r\nroot@demo-ct:~# echo a  b\r\na b\r\nroot@demo-ct:~# uname\r\nLinux\r\n"+
		"root@demo-ct:~# ls\r\n-bash: ls: command not found\r\nroot@demo-ct:~# ")
	if body := h.control("GET", "/_sim/consoles"); body != `{"open":1}` {
		t.Fatalf("open consoles %s", body)
	}
	if body := h.control("DELETE", "/_sim/consoles"); body != `{"closed":1}` {
		t.Fatalf("closed consoles %s", body)
	}
	if _, err := in.ReadByte(); err == nil {
		t.Fatal("the session outlived CloseConsoles")
	}
}

// readUntil reads exactly len(want) bytes and compares them.
func readUntil(t *testing.T, in *bufio.Reader, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(in, got); err != nil || string(got) != want {
		t.Fatalf("read %q (%v), want %q", got, err, want)
	}
}

// control calls the control API and returns the trimmed body of a 200 answer.
func (h *harness) control(method, path string) string {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return strings.TrimSpace(string(raw))
}
