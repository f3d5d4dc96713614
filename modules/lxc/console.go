package lxc

import (
	"context"

	"pvebill/modules/kinds"
)

// OpenConsole opens the container's terminal (termproxy) after checking its stamp (R39) and
// that it runs: the stream is past termproxy's "<user>:<ticket>" handshake, so the relay only
// moves the browser's frames and the output bytes.
func (m *Module) OpenConsole(ctx context.Context, g kinds.Guest) (*kinds.Console, error) {
	if err := kinds.ConsoleTarget(ctx, m, g); err != nil {
		return nil, err
	}
	conn, err := g.Client.OpenTerminal(ctx, g.Node, g.VMID)
	if err != nil {
		return nil, err
	}
	return &kinds.Console{Protocol: kinds.ConsoleTerminal, Upstream: conn}, nil
}

// ConsoleProtocols implements kinds.Consoler: a container has a terminal.
func (m *Module) ConsoleProtocols() []kinds.ConsoleProtocol {
	return []kinds.ConsoleProtocol{kinds.ConsoleTerminal}
}

var _ kinds.Consoler = (*Module)(nil)
