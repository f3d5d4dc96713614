package qemu

import (
	"context"
	"fmt"
	"time"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// StageReboot names the reboot task in an operation's result.
const StageReboot = "reboot"

func stopped(st pve.QEMUStatus) bool { return !st.Running() }

// Stop stops the VM hard (a paused one too) and reads back that it is stopped; a stopped VM is
// left alone (no task).
func (m *Module) Stop(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	if err := kinds.StopIfRunning(ctx, fmt.Sprintf("VM %d", g.VMID), vmPower{vm(g)}, rep, StageStop); err != nil {
		return err
	}
	return m.expect(ctx, g, "stopped", stopped)
}

// Shutdown asks the VM to shut down (ACPI or guest agent) within timeout with forceStop=0, so
// Proxmox never turns it into a stop; a VM still running at the end is
// kinds.ErrShutdownTimeout. A stopped VM is left alone (no task).
func (m *Module) Shutdown(ctx context.Context, g kinds.Guest, timeout time.Duration, rep kinds.Reporter) error {
	sent, err := kinds.ShutdownWithin(ctx, fmt.Sprintf("VM %d", g.VMID), vmPower{vm(g)}, timeout, rep, StageShutdown)
	if err != nil || !sent {
		return err
	}
	if err := m.expect(ctx, g, "stopped", stopped); err != nil {
		return fmt.Errorf("%w: %w", kinds.ErrShutdownTimeout, err)
	}
	return nil
}

// Reboot reboots a running VM (kinds.ErrGuestNotRunning otherwise) and reads back that it
// runs.
func (m *Module) Reboot(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	if err := kinds.RebootRunning(ctx, fmt.Sprintf("VM %d", g.VMID), vmPower{vm(g)}, rep, StageReboot); err != nil {
		return err
	}
	return m.expect(ctx, g, "running", func(st pve.QEMUStatus) bool { return st.Running() && !st.Paused() })
}

var _ kinds.PowerController = (*Module)(nil)

// vmPower is a VM's client as the power calls every kind shares see it.
type vmPower struct{ *pve.QEMUClient }

func (q vmPower) Running(ctx context.Context) (running, ha bool, err error) {
	st, err := q.Status(ctx)
	return st.Running(), st.HA != nil && bool(st.HA.Managed), err
}
