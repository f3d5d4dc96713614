package qemu

import (
	"context"

	"pvebill/modules/kinds"
)

// OpenConsole opens the VM's screen (vncproxy with websocket=1) after checking its stamp (R39)
// and that it runs: the stream is past the VNC authentication with the vncticket, and the relay
// greets the browser with kinds.Console.GreetBrowser (security type None), so the ticket never
// reaches the page.
func (m *Module) OpenConsole(ctx context.Context, g kinds.Guest) (*kinds.Console, error) {
	if err := kinds.ConsoleTarget(ctx, m, g); err != nil {
		return nil, err
	}
	conn, err := g.Client.OpenVNC(ctx, g.Node, g.VMID)
	if err != nil {
		return nil, err
	}
	return &kinds.Console{Protocol: kinds.ConsoleVNC, Upstream: conn}, nil
}

// ConsoleProtocols implements kinds.Consoler: a VM has a screen.
func (m *Module) ConsoleProtocols() []kinds.ConsoleProtocol {
	return []kinds.ConsoleProtocol{kinds.ConsoleVNC}
}

var _ kinds.Consoler = (*Module)(nil)
