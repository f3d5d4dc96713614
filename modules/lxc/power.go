package lxc

import (
	"context"
	"errors"
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
	c := ct(g)
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if st.Running() {
		res, err := c.Stop(ctx)
		if err != nil && !errors.Is(err, pve.ErrNotRunning) {
			return fmt.Errorf("stop container %d: %w", g.VMID, err)
		}
		report(rep, StageStop, res)
	}
	return m.expect(ctx, g, false)
}

// Shutdown asks the container to shut down within timeout with forceStop=0, so Proxmox never
// turns it into a stop; a container still running at the end is kinds.ErrShutdownTimeout.
// A stopped container is left alone (no task).
func (m *Module) Shutdown(ctx context.Context, g kinds.Guest, timeout time.Duration, rep kinds.Reporter) error {
	c := ct(g)
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if !st.Running() {
		return nil
	}
	res, err := c.Shutdown(ctx, int(timeout.Seconds()), false)
	switch {
	case err == nil:
		report(rep, StageShutdown, res)
	case errors.Is(err, pve.ErrTaskFailed):
		// The task fails when the time is up: one read says whether the guest still runs.
		st, rerr := c.Status(ctx)
		if rerr != nil {
			return fmt.Errorf("read container %d status: %w", g.VMID, rerr)
		}
		if st.Running() {
			return fmt.Errorf("%w: %w", kinds.ErrShutdownTimeout, err)
		}
	case !errors.Is(err, pve.ErrNotRunning):
		return fmt.Errorf("shut down container %d: %w", g.VMID, err)
	}
	if err := m.expect(ctx, g, false); err != nil {
		return fmt.Errorf("%w: %w", kinds.ErrShutdownTimeout, err)
	}
	return nil
}

// Reboot reboots a running container (kinds.ErrGuestNotRunning otherwise) and reads back that
// it runs.
func (m *Module) Reboot(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	c := ct(g)
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if !st.Running() {
		return kinds.ErrGuestNotRunning
	}
	res, err := c.Reboot(ctx, 0)
	if errors.Is(err, pve.ErrNotRunning) {
		return kinds.ErrGuestNotRunning
	}
	if err != nil {
		return fmt.Errorf("reboot container %d: %w", g.VMID, err)
	}
	report(rep, StageReboot, res)
	return m.expect(ctx, g, true)
}

var _ kinds.PowerController = (*Module)(nil)
