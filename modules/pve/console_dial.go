package pve

import (
	"bytes"
	"context"
	"crypto/des"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// The console WebSocket: GET /nodes/{node}/{lxc|qemu}/{vmid}/vncwebsocket with the console
// user's ticket cookie and the subprotocol "binary" (docs/proxmox.md §14), over the client's
// own transport, so the cluster's TLS settings (pinned fingerprint, verification) hold.

// ConsoleHandshakeTimeout bounds opening a console: the proxy call, the upgrade and the
// protocol's handshake.
const ConsoleHandshakeTimeout = 30 * time.Second

// ErrConsoleRefused is a console WebSocket or handshake that Proxmox refused.
var ErrConsoleRefused = errors.New("pve: console refused")

// DialConsole upgrades to the WebSocket of a proxy started by Termproxy (kind "lxc") or
// Vncproxy (kind "qemu"). The connection carries binary messages; its read limit is lifted.
func (c *Client) DialConsole(ctx context.Context, node, kind string, vmid int, p ConsoleProxy) (*websocket.Conn, error) {
	t, err := c.consoleTicket(ctx, "")
	if err != nil {
		return nil, err
	}
	u := *c.base
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[c.base.Scheme]
	path := "/nodes/" + node + "/" + kind + "/" + strconv.Itoa(vmid) + "/vncwebsocket"
	if _, err := MatchRoute(http.MethodGet, path, UpgradeCall); err != nil {
		return nil, err
	}
	u.Path = c.base.Path + APIBasePath + path
	u.RawQuery = url.Values{"port": {strconv.Itoa(int(p.Port))}, "vncticket": {p.Ticket}}.Encode()
	h := http.Header{}
	if t.agent {
		h.Set(HeaderAgentAuth, "console")
	} else {
		h.Set("Cookie", (&http.Cookie{Name: "PVEAuthCookie", Value: t.ticket}).String())
	}
	ws, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h,
		Subprotocols: []string{"binary"}})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		msg := redactSecret(redactSecret(c.redact(err.Error()), p.Ticket), url.QueryEscape(p.Ticket))
		if isTLSError(err) {
			return nil, &APIError{Method: http.MethodGet, Path: path, Status: status, Message: msg, Kind: ErrTLS}
		}
		return nil, fmt.Errorf("%w: vncwebsocket of %s %d (HTTP %d): %s", ErrConsoleRefused, kind, vmid, status, msg)
	}
	if ws.Subprotocol() != "binary" {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("%w: vncwebsocket of %s %d did not accept the subprotocol binary", ErrConsoleRefused, kind, vmid)
	}
	return ws, nil
}

// OpenTerminal opens a container's terminal: termproxy, the WebSocket and termproxy's
// "<user>:<ticket>\n" handshake answered "OK". What it returns is the terminal stream: write
// termproxy frames ("0:<len>:<data>", "1:<cols>:<rows>:", "2"), each Write one message; read
// raw output. ctx bounds the session's whole life: cancelling it closes the stream.
func (c *Client) OpenTerminal(ctx context.Context, node string, vmid int) (net.Conn, error) {
	p, conn, err := c.openConsole(ctx, node, "lxc", vmid, c.Termproxy)
	if err != nil {
		return nil, err
	}
	ok := make([]byte, 2)
	if _, err = io.WriteString(conn, p.User+":"+p.Ticket+"\n"); err == nil {
		_, err = io.ReadFull(conn, ok)
	}
	if err == nil && string(ok) != "OK" {
		err = errors.New("no OK")
	}
	return handshakeDone(conn, vmid, "terminal", err)
}

// OpenVNC opens a VM's screen: vncproxy, the WebSocket and the RFB 3.8 handshake with VNC
// authentication by the vncticket. What it returns is the RFB stream right after the server's
// SecurityResult OK: the server now waits for ClientInit. ctx bounds the session's whole life.
func (c *Client) OpenVNC(ctx context.Context, node string, vmid int) (net.Conn, error) {
	p, conn, err := c.openConsole(ctx, node, "qemu", vmid, c.Vncproxy)
	if err != nil {
		return nil, err
	}
	return handshakeDone(conn, vmid, "VNC", rfbAuthenticate(conn, p.Ticket))
}

// openConsole starts the proxy and dials its WebSocket, with the handshake deadline set.
func (c *Client) openConsole(ctx context.Context, node, kind string, vmid int,
	start func(context.Context, string, int) (ConsoleProxy, error)) (ConsoleProxy, net.Conn, error) {
	hctx, cancel := context.WithTimeout(ctx, ConsoleHandshakeTimeout)
	defer cancel()
	p, err := start(hctx, node, vmid)
	if err != nil {
		return p, nil, err
	}
	ws, err := c.DialConsole(hctx, node, kind, vmid, p)
	if err != nil {
		return p, nil, err
	}
	conn := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	_ = conn.SetDeadline(time.Now().Add(ConsoleHandshakeTimeout)) // a websocket net.Conn takes deadlines
	return p, conn, nil
}

// handshakeDone clears the handshake deadline, or closes the stream when the handshake failed.
func handshakeDone(conn net.Conn, vmid int, what string, err error) (net.Conn, error) {
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("%w: %s handshake with guest %d: %w", ErrConsoleRefused, what, vmid, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

// rfbAuthenticate is the client half of the RFB 3.8 version exchange and VNC authentication
// (RFC 6143 §7.1–7.2): the response is the challenge DES-encrypted with the password's first
// eight bytes, each bit-reversed, as VNC servers expect.
func rfbAuthenticate(conn io.ReadWriter, password string) error {
	version := make([]byte, 12)
	if _, err := io.ReadFull(conn, version); err != nil {
		return err
	}
	if !bytes.HasPrefix(version, []byte("RFB 003.")) {
		return fmt.Errorf("not an RFB server")
	}
	if _, err := io.WriteString(conn, "RFB 003.008\n"); err != nil {
		return err
	}
	types, err := readCounted(conn, 1)
	if err != nil {
		return err
	}
	if !bytes.Contains(types, []byte{2}) {
		return fmt.Errorf("server offers no VNC authentication")
	}
	if _, err := conn.Write([]byte{2}); err != nil {
		return err
	}
	challenge := make([]byte, 16)
	if _, err := io.ReadFull(conn, challenge); err != nil {
		return err
	}
	key := make([]byte, 8)
	copy(key, password)
	for i, b := range key {
		key[i] = bits.Reverse8(b)
	}
	block, err := des.NewCipher(key)
	if err != nil {
		return err
	}
	block.Encrypt(challenge[:8], challenge[:8])
	block.Encrypt(challenge[8:], challenge[8:])
	if _, err := conn.Write(challenge); err != nil {
		return err
	}
	return readSecurityResult(conn)
}

// readSecurityResult reads an RFB 3.8 SecurityResult and its reason on failure.
func readSecurityResult(r io.Reader) error {
	res := make([]byte, 4)
	if _, err := io.ReadFull(r, res); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(res) == 0 {
		return nil
	}
	reason, err := readCounted(r, 4)
	if err != nil {
		return fmt.Errorf("VNC authentication failed")
	}
	return fmt.Errorf("VNC authentication failed: %.200s", reason)
}

// readCounted reads a length-prefixed byte string whose big-endian length has n bytes (1 or 4).
func readCounted(r io.Reader, n int) ([]byte, error) {
	lb := make([]byte, 4)
	if _, err := io.ReadFull(r, lb[4-n:]); err != nil {
		return nil, err
	}
	l := binary.BigEndian.Uint32(lb)
	if l == 0 || l > 4096 {
		return nil, fmt.Errorf("bad RFB length %d", l)
	}
	b := make([]byte, l)
	_, err := io.ReadFull(r, b)
	return b, err
}
