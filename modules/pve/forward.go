package pve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// Forwarding is the agent's half of the client (design.md, "The agent"): a call pvebill sent
// through a tunnel is sent to Proxmox with this client's own credentials, which pvebill never
// holds. The caller has matched the call against the route table (MatchRoute) already.

// ForwardRequest is a call received through a tunnel. Path is escaped and relative to
// /api2/json, as MatchRoute took it.
type ForwardRequest struct {
	Method      string
	Path        string
	RawQuery    string
	ContentType string
	Body        []byte
	// Console sends the console user's ticket instead of the API token.
	Console bool
	// Upgrade is a WebSocket upgrade; WebSocket carries its Sec-WebSocket-* headers.
	Upgrade   bool
	WebSocket http.Header
}

// ErrForwardUnsent is a forwarded call that never reached Proxmox (a refused or failed dial):
// sending it again is safe. Any other forwarding error may have reached Proxmox.
var ErrForwardUnsent = errors.New("pve: forwarded call not sent")

// Forward sends fr to Proxmox and returns its answer unread (for an upgrade: the 101 whose body
// is the WebSocket's byte stream). A console call whose ticket Proxmox refuses is sent once more
// after a new login, as consoleCall does.
func (c *Client) Forward(ctx context.Context, fr ForwardRequest) (*http.Response, error) {
	var t ticketAuth
	if fr.Console {
		var err error
		if t, err = c.consoleTicket(ctx, ""); err != nil {
			return nil, err
		}
	}
	resp, err := c.forwardOnce(ctx, fr, t)
	if err != nil || !fr.Console || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	_ = resp.Body.Close()
	if t, err = c.consoleTicket(ctx, t.ticket); err != nil {
		return nil, err
	}
	return c.forwardOnce(ctx, fr, t)
}

func (c *Client) forwardOnce(ctx context.Context, fr ForwardRequest, t ticketAuth) (*http.Response, error) {
	u := c.endpoint(fr.Path)
	u.RawQuery = fr.RawQuery
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, fr.Method, u.String(), bytes.NewReader(fr.Body))
	if err != nil {
		return nil, errors.Join(ErrForwardUnsent, err)
	}
	if len(fr.Body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if fr.ContentType != "" {
		req.Header.Set("Content-Type", fr.ContentType)
	}
	req.Header.Set("Accept", "application/json")
	if fr.Upgrade {
		for _, k := range []string{"Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions"} {
			if v := fr.WebSocket.Get(k); v != "" {
				req.Header.Set(k, v)
			}
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
	}
	if fr.Console {
		c.authorize(context.WithValue(ctx, ticketAuthKey{}, t), req)
	} else {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		msg := errors.New(c.redact(err.Error()))
		if !wrote.Load() {
			return nil, errors.Join(ErrForwardUnsent, msg)
		}
		return nil, msg
	}
	return resp, nil
}
