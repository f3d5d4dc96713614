package agent

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"pvebill/modules/pve"
)

// maxRequestBody caps a call's body at the agent: pvebill sends small forms.
const maxRequestBody = 1 << 20

// ServeHTTP is one stream of the tunnel: a call pvebill's client made. It is checked against
// the route table on its path decoded segment by segment (WebSocket upgrades included), its
// credentials stripped (only the agent's own are added), and sent to Proxmox.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ReplicasPath && r.Method == http.MethodPut {
		a.replicasTold(w, r)
		return
	}
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), pve.APIBasePath)
	upgrade := r.Header.Get(HeaderUpgrade) == "websocket"
	if !ok {
		a.refuse(w, r, pve.ReasonBadPath, "path outside "+pve.APIBasePath)
		return
	}
	kind := pve.PlainCall
	if upgrade {
		kind = pve.UpgradeCall
	}
	route, err := pve.MatchRoute(r.Method, path, kind)
	if err == nil && route.Direct {
		err = &pve.RouteError{Reason: pve.ReasonDirectOnly, Detail: r.Method + " " + route.Pattern}
	}
	var rerr *pve.RouteError
	if errors.As(err, &rerr) {
		a.refuse(w, r, rerr.Reason, rerr.Detail)
		return
	}
	fr := pve.ForwardRequest{Method: r.Method, Path: path, RawQuery: r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"), Console: r.Header.Get(pve.HeaderAgentAuth) == "console"}
	if upgrade {
		fr.Upgrade, fr.WebSocket = true, r.Header
		a.forwardUpgrade(w, r, fr)
		return
	}
	body, err := readAll(r.Body)
	if errors.Is(err, errBodyTooLarge) {
		a.refuse(w, r, "body_too_large", "request body over 1 MiB")
		return
	}
	if err != nil {
		return // the stream broke; nothing was sent
	}
	fr.Body = body
	a.served.Add(1)
	resp, err := a.pve.Forward(r.Context(), fr)
	if err != nil {
		a.unreachable(w, r, err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	copyAnswer(w, resp)
	_, _ = io.Copy(w, resp.Body)
}

// copyAnswer passes Proxmox's status, reason phrase and the headers the client reads.
func copyAnswer(w http.ResponseWriter, resp *http.Response) {
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	if reason != "" && reason != http.StatusText(resp.StatusCode) {
		w.Header().Set(pve.HeaderAgentReason, sanitizeHeader(reason))
	}
	w.WriteHeader(resp.StatusCode)
}

func sanitizeHeader(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// unreachable answers a call Proxmox did not answer. One that never left is 595 (the client
// may send it again); one that may have reached Proxmox is 596, which the client never repeats
// for a write: its outcome is unknown and is read back (R57).
func (a *Agent) unreachable(w http.ResponseWriter, r *http.Request, err error) {
	status := 596
	if errors.Is(err, pve.ErrForwardUnsent) {
		status = 595
	}
	a.log.Warn("proxmox did not answer a forwarded call", "method", r.Method, "path", r.URL.EscapedPath(),
		"status", status, "err", err.Error())
	w.Header().Set(pve.HeaderAgentReason, "agent: Proxmox did not answer")
	w.WriteHeader(status)
}

// refuse answers 403 with a problem body and logs the reason. The query is left out of the log:
// it may carry a console ticket.
func (a *Agent) refuse(w http.ResponseWriter, r *http.Request, reason, detail string) {
	a.refused.Add(1)
	a.log.Warn("agent refused a call", "method", r.Method, "path", r.URL.EscapedPath(), "reason", reason,
		"detail", detail, "upgrade", r.Header.Get(HeaderUpgrade) != "")
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set(pve.HeaderAgentRefused, reason)
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": "Refused by the agent",
		"status": http.StatusForbidden, "code": "agent_refused", "reason": reason, "detail": detail})
}

// forwardUpgrade opens Proxmox's WebSocket and pipes it both ways through the stream.
func (a *Agent) forwardUpgrade(w http.ResponseWriter, r *http.Request, fr pve.ForwardRequest) {
	a.served.Add(1)
	resp, err := a.pve.Forward(r.Context(), fr)
	if err != nil {
		a.unreachable(w, r, err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if resp.StatusCode != http.StatusSwitchingProtocols || !ok {
		copyAnswer(w, resp)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	for _, k := range []string{"Sec-WebSocket-Accept", "Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set(HeaderUpgradeStatus, "101")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	go func() {
		_, _ = io.Copy(rwc, r.Body)
		_ = rwc.Close()
	}()
	go func() {
		<-r.Context().Done()
		_ = rwc.Close()
	}()
	_, _ = io.Copy(flushWriter{w: w, rc: rc}, rwc)
}

// flushWriter sends each write at once: a console is interactive.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}
