package lxc

import (
	"context"
	"fmt"
	"time"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// StageReboot names the reboot task in an operation's result.
const StageReboot = "reboot"

// Stop stops the container hard and reads back that it is stopped; a stopped container is left
// alone (no task).
func (m *Module) Stop(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	if err := kinds.StopIfRunning(ctx, fmt.Sprintf("container %d", g.VMID), ctPower{ct(g)}, rep, StageStop); err != nil {
		return err
	}
	return m.expect(ctx, g, false)
}

// Shutdown asks the container to shut down within timeout with forceStop=0, so Proxmox never
// turns it into a stop; a container still running at the end is kinds.ErrShutdownTimeout.
// A stopped container is left alone (no task).
func (m *Module) Shutdown(ctx context.Context, g kinds.Guest, timeout time.Duration, rep kinds.Reporter) error {
	sent, err := kinds.ShutdownWithin(ctx, fmt.Sprintf("container %d", g.VMID), ctPower{ct(g)}, timeout, rep, StageShutdown)
	if err != nil || !sent {
		return err
	}
	if err := m.expect(ctx, g, false); err != nil {
		return fmt.Errorf("%w: %w", kinds.ErrShutdownTimeout, err)
	}
	return nil
}

// Reboot reboots a running container (kinds.ErrGuestNotRunning otherwise) and reads back that
// it runs.
func (m *Module) Reboot(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	if err := kinds.RebootRunning(ctx, fmt.Sprintf("container %d", g.VMID), ctPower{ct(g)}, rep, StageReboot); err != nil {
		return err
	}
	return m.expect(ctx, g, true)
}

var _ kinds.PowerController = (*Module)(nil)

// ctPower is a container's client as the power calls every kind shares see it.
type ctPower struct{ *pve.LXCClient }

func (c ctPower) Running(ctx context.Context) (running, ha bool, err error) {
	st, err := c.Status(ctx)
	return st.Running(), st.HA != nil && bool(st.HA.Managed), err
}
