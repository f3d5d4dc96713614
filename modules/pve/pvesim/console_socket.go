package pvesim

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

// GET /nodes/{node}/{lxc|qemu}/{vmid}/vncwebsocket?port=&vncticket= upgrades to a WebSocket
// carrying the proxy's stream (pve-http-server's websocket_proxy). Like Proxmox it refuses an
// API token (the console needs a ticket of a user with VM.Console, docs/proxmox.md §14) and a
// client that does not ask for the subprotocol "binary". Proxmox drops such a connection right
// after the upgrade; the simulator refuses before it, with a status a test can read: 401 for
// a token or no valid ticket, 400 without "binary", 403 for a vncticket that is not the one
// of this port, guest and user (or a port no longer waiting).

// isConsoleSocketPath reports whether a request is a vncwebsocket upgrade.
func isConsoleSocketPath(method, rel string) bool {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	return method == http.MethodGet && len(parts) == 5 && parts[0] == "nodes" &&
		(parts[2] == "lxc" || parts[2] == "qemu") && parts[4] == "vncwebsocket"
}

// serveConsoleSocket checks and upgrades a vncwebsocket request, then runs the terminal or
// the VNC server until either side closes.
func (s *Sim) serveConsoleSocket(w http.ResponseWriter, r *http.Request, form url.Values, entry Request) {
	parts := strings.Split(strings.Trim(entry.Path, "/"), "/")
	node, typ := parts[1], parts[2]
	vmid, _ := strconv.Atoi(parts[3])
	port, _ := strconv.Atoi(form.Get("port"))
	refuse := func(status int, msg string) {
		entry.Status = status
		s.record(entry)
		writeJSON(w, status, map[string]any{"data": nil, "message": msg})
	}
	ck, err := r.Cookie(authCookie)
	user, ok := "", false
	if err == nil {
		user, ok = s.verifyTicket(ck.Value)
	}
	if !ok && err != nil && r.Header.Get("Authorization") != "" {
		refuse(http.StatusUnauthorized, "authentication failure - API tokens cannot open a console\n")
		return
	}
	if !ok {
		refuse(http.StatusUnauthorized, "authentication failure\n")
		return
	}
	if !slices.Contains(requestedProtocols(r), "binary") {
		refuse(http.StatusBadRequest, "websocket: subprotocol 'binary' missing\n")
		return
	}
	sess, ctx, ok := s.claimConsole(node, typ, vmid, port, user, form.Get("vncticket"))
	if !ok {
		refuse(http.StatusForbidden, "Permission check failed (permission denied - invalid vnc ticket)\n")
		return
	}
	defer s.releaseConsole(sess)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"binary"},
		InsecureSkipVerify: true})
	if err != nil {
		entry.Status = http.StatusBadRequest
		s.record(entry)
		return
	}
	entry.Status = http.StatusSwitchingProtocols
	s.record(entry)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	defer conn.Close()
	s.runConsole(ctx, conn, sess)
}

// runConsole serves the session's protocol: the termproxy shell or the RFB server.
func (s *Sim) runConsole(ctx context.Context, conn net.Conn, sess *consoleSession) {
	if sess.typ == "lxc" {
		s.serveTerminal(ctx, conn, sess)
		return
	}
	s.serveRFB(ctx, conn, sess)
}

// requestedProtocols lists the Sec-WebSocket-Protocol values of a request.
func requestedProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}
