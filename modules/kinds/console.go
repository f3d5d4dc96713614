package kinds

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"pvebill/modules/pve"
)

// The console a Consoler opens, and what the relay to a browser needs of it (R41).

// ErrNoConsoleUser is a console asked of a cluster configured without a console user (the
// client's error, for the flows that must not reach the client).
var ErrNoConsoleUser = pve.ErrNoConsoleUser

// ConsoleProtocol is what a console carries; the names are docs/api.md's console kinds.
type ConsoleProtocol string

// The console protocols.
const (
	// ConsoleTerminal is a container's terminal in termproxy's framing: the browser sends
	// "0:<len>:<data>" (input), "1:<cols>:<rows>:" (resize) and "2" (keep-alive); the
	// guest's output comes back as raw bytes.
	ConsoleTerminal ConsoleProtocol = "terminal"
	// ConsoleVNC is a VM's screen in RFB, for noVNC.
	ConsoleVNC ConsoleProtocol = "vnc"
)

// Console is an open console: Upstream is the stream to Proxmox, already past its
// authentication (each Write is one WebSocket message to Proxmox; Read returns its bytes
// across messages). Close it, or cancel the context it was opened with, to end the session.
type Console struct {
	Protocol ConsoleProtocol
	Upstream net.Conn
}

// Close ends the session upstream.
func (c *Console) Close() error { return c.Upstream.Close() }

// GreetBrowser runs, with the browser, what must happen before bytes are relayed unchanged
// both ways. For a terminal nothing. For a screen, Proxmox's VNC authentication is already
// done upstream with the vncticket, so the browser is offered RFB 3.8 with the security type
// None: the ticket never reaches the page. After GreetBrowser, the browser's next message
// (ClientInit) is what Upstream waits for.
func (c *Console) GreetBrowser(browser io.ReadWriter) error {
	if c.Protocol != ConsoleVNC {
		return nil
	}
	return GreetRFBNone(browser)
}

// GreetRFBNone is the server half of an RFB 3.8 handshake offering only the security type
// None (RFC 6143 §7.1–7.2): version, the one type, the client's choice, SecurityResult OK.
func GreetRFBNone(rw io.ReadWriter) error {
	if _, err := io.WriteString(rw, "RFB 003.008\n"); err != nil {
		return err
	}
	version := make([]byte, 12)
	if _, err := io.ReadFull(rw, version); err != nil {
		return err
	}
	if string(version[:8]) != "RFB 003." {
		return fmt.Errorf("console: the browser does not speak RFB")
	}
	if _, err := rw.Write([]byte{1, 1}); err != nil { // one security type: None
		return err
	}
	choice := make([]byte, 1)
	if _, err := io.ReadFull(rw, choice); err != nil {
		return err
	}
	if choice[0] != 1 {
		return fmt.Errorf("console: the browser chose security type %d, not None", choice[0])
	}
	_, err := rw.Write(binary.BigEndian.AppendUint32(nil, 0))
	return err
}

// ConsoleTarget checks, before a console is opened, that the guest is the service's (R39) and
// runs: what every kind's OpenConsole does first.
func ConsoleTarget(ctx context.Context, m Module, g Guest) error {
	in, err := m.Inspect(ctx, g)
	if err != nil {
		return err
	}
	if !in.Exists || !in.Stamped || in.Kind != m.Kind() {
		return fmt.Errorf("%w: %d on %s", ErrNotOurs, g.VMID, g.Node)
	}
	if !in.Running {
		return fmt.Errorf("%w: %d on %s", ErrGuestNotRunning, g.VMID, g.Node)
	}
	return nil
}
