package pve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Consoles need a ticket of a real user holding VM.Console: an API token's console ticket
// names the token and is refused (docs/proxmox.md §14). The client logs the cluster's console
// user in with POST /access/ticket, keeps the ticket in memory only, renews it before its two
// hours end (one login at a time) and sends it as the PVEAuthCookie cookie, with the
// CSRFPreventionToken header on writes.

// ErrNoConsoleUser is a console call on a cluster configured without a console user.
var ErrNoConsoleUser = errors.New("pve: no console user is configured for this cluster")

// HasConsoleUser reports whether the cluster was configured with a console user: without one,
// every console call is ErrNoConsoleUser, and pvebill offers no console on the cluster (R41).
// Through an agent, the agent holds the console user and the answer is yes.
func (c *Client) HasConsoleUser() bool { return c.console.user != "" || c.tunnel }

// consoleLogin is the console user's credentials and current ticket.
type consoleLogin struct {
	user, password string
	renewAfter     time.Duration
	now            func() time.Time
	// sem admits one login at a time; mu guards the ticket fields.
	sem    chan struct{}
	mu     sync.Mutex
	ticket ticketAuth
	issued time.Time
}

// ticketAuth is a login ticket and its CSRF token; the zero value sends no credentials. agent
// asks an agent to add its console user's ticket (the client holds none).
type ticketAuth struct {
	ticket, csrf string
	agent        bool
}

type ticketAuthKey struct{}

func newConsoleLogin(cfg Config) consoleLogin {
	return consoleLogin{user: cfg.ConsoleUser, password: cfg.ConsolePassword,
		renewAfter: orDefault(cfg.ConsoleTicketRenew, DefaultConsoleTicketRenew), now: time.Now,
		sem: make(chan struct{}, 1)}
}

// redact removes the password and the current ticket from s.
func (l *consoleLogin) redact(s string) string {
	l.mu.Lock()
	t := l.ticket
	l.mu.Unlock()
	return redactSecret(redactSecret(redactSecret(s, l.password), t.ticket), t.csrf)
}

func (l *consoleLogin) current() (ticketAuth, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ticket, l.ticket.ticket != "" && l.now().Sub(l.issued) < l.renewAfter
}

// authorize puts the request's credentials on it: the ticket a console call carries in its
// context, none for a login, the API token otherwise.
func (c *Client) authorize(ctx context.Context, req *http.Request) {
	a, ok := ctx.Value(ticketAuthKey{}).(ticketAuth)
	switch {
	case !ok && c.tunnel:
		return
	case !ok:
		req.Header.Set("Authorization", c.auth)
		return
	case a.agent:
		req.Header.Set(HeaderAgentAuth, "console")
		return
	}
	if a.ticket == "" {
		return
	}
	req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: a.ticket})
	if req.Method != http.MethodGet {
		req.Header.Set("CSRFPreventionToken", a.csrf)
	}
}

// consoleTicket returns a ticket younger than the renewal age, logging in when there is none
// or when the one at hand is stale (refused by Proxmox). Concurrent callers share one login.
func (c *Client) consoleTicket(ctx context.Context, stale string) (ticketAuth, error) {
	if c.tunnel {
		return ticketAuth{agent: true}, nil
	}
	l := &c.console
	if l.user == "" {
		return ticketAuth{}, ErrNoConsoleUser
	}
	if t, ok := l.current(); ok && t.ticket != stale {
		return t, nil
	}
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return ticketAuth{}, ctx.Err()
	}
	defer func() { <-l.sem }()
	if t, ok := l.current(); ok && t.ticket != stale { // another caller logged in meanwhile
		return t, nil
	}
	var out struct {
		Ticket string `json:"ticket"`
		CSRF   string `json:"CSRFPreventionToken"`
	}
	issued := l.now()
	err := c.DoRequest(context.WithValue(ctx, ticketAuthKey{}, ticketAuth{}), http.MethodPost, "/access/ticket",
		url.Values{"username": {l.user}, "password": {l.password}}, &out)
	if err != nil {
		return ticketAuth{}, fmt.Errorf("pve: console user login: %w", err)
	}
	if out.Ticket == "" || out.CSRF == "" {
		return ticketAuth{}, errors.New("pve: console user login: no ticket in the answer")
	}
	t := ticketAuth{ticket: out.Ticket, csrf: out.CSRF}
	l.mu.Lock()
	l.ticket, l.issued = t, issued
	l.mu.Unlock()
	return t, nil
}

// consoleCall sends a request with the console user's ticket; a ticket Proxmox refuses (it
// expired, or the node restarted) is replaced by one new login and the request sent again.
func (c *Client) consoleCall(ctx context.Context, method, path string, params url.Values, out any) error {
	t, err := c.consoleTicket(ctx, "")
	if err != nil {
		return err
	}
	err = c.DoRequest(context.WithValue(ctx, ticketAuthKey{}, t), method, path, params, out)
	if t.agent || !errors.Is(err, ErrAuth) {
		// Through an agent, the agent renews its own ticket.
		return err
	}
	if t, err = c.consoleTicket(ctx, t.ticket); err != nil {
		return err
	}
	return c.DoRequest(context.WithValue(ctx, ticketAuthKey{}, t), method, path, params, out)
}

// ConsoleProxy is a console proxy Proxmox started for one client: its port, the vncticket
// (the VNC password of a vncproxy), the user it was started for and its task. The ticket is a
// secret: String leaves it out.
type ConsoleProxy struct {
	Port   Int    `json:"port"`
	Ticket string `json:"ticket"`
	User   string `json:"user"`
	UPID   string `json:"upid"`
}

// String renders the proxy without its ticket.
func (p ConsoleProxy) String() string {
	return fmt.Sprintf("pve.ConsoleProxy{Port:%d User:%q UPID:%q}", p.Port, p.User, p.UPID)
}

// GoString is String.
func (p ConsoleProxy) GoString() string { return p.String() }

// LogValue keeps the ticket out of structured logs.
func (p ConsoleProxy) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("port", int(p.Port)), slog.String("user", p.User), slog.String("upid", p.UPID))
}

// Termproxy starts a container's terminal proxy (POST /nodes/{node}/lxc/{vmid}/termproxy)
// as the console user.
func (c *Client) Termproxy(ctx context.Context, node string, vmid int) (ConsoleProxy, error) {
	var p ConsoleProxy
	err := c.consoleCall(ctx, http.MethodPost, "/nodes/"+url.PathEscape(node)+"/lxc/"+strconv.Itoa(vmid)+"/termproxy", nil, &p)
	return p, err
}

// Vncproxy starts a VM's VNC proxy for a WebSocket client (POST
// /nodes/{node}/qemu/{vmid}/vncproxy with websocket=1) as the console user.
func (c *Client) Vncproxy(ctx context.Context, node string, vmid int) (ConsoleProxy, error) {
	var p ConsoleProxy
	err := c.consoleCall(ctx, http.MethodPost, "/nodes/"+url.PathEscape(node)+"/qemu/"+strconv.Itoa(vmid)+"/vncproxy",
		url.Values{"websocket": {"1"}}, &p)
	return p, err
}
