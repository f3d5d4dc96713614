package kinds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pvebill/modules/pve"
)

// PowerCalls are a guest's power calls on its kind's Proxmox client, the same for every kind
// but for the status read: each kind adapts its client (pve.LXCClient, pve.QEMUClient) with a
// Running of its own.
type PowerCalls interface {
	// Running reads the guest's status: whether it runs and whether HA manages it.
	Running(ctx context.Context) (running, ha bool, err error)
	Stop(ctx context.Context) (pve.TaskResult, error)
	Shutdown(ctx context.Context, timeoutSec int, forceStop bool) (pve.TaskResult, error)
	Reboot(ctx context.Context, timeoutSec int) (pve.TaskResult, error)
}

// Report records a task's result when there is a Reporter.
func Report(rep Reporter, stage string, res pve.TaskResult) {
	if rep != nil {
		rep.Task(stage, res)
	}
}

// StopConfirmed stops the guest (what names it in errors: "container 5001") if it runs, reads
// back that it is stopped, and reports whether it is HA-managed.
func StopConfirmed(ctx context.Context, what string, p PowerCalls) (ha bool, err error) {
	running, ha, err := p.Running(ctx)
	if err != nil {
		return false, fmt.Errorf("read %s status: %w", what, err)
	}
	if !running {
		return ha, nil
	}
	if _, err := p.Stop(ctx); err != nil && !errors.Is(err, pve.ErrNotRunning) {
		return false, fmt.Errorf("stop %s: %w", what, err)
	}
	if running, ha, err = p.Running(ctx); err != nil {
		return false, fmt.Errorf("read %s status: %w", what, err)
	}
	if running {
		return false, fmt.Errorf("%s reads back running after stop", what)
	}
	return ha, nil
}

// ShutdownWithin asks a running guest to shut down within timeout with forceStop=0, so that
// Proxmox never turns it into a stop (R40). It reports sent=false, and sends nothing, for a
// guest that is not running. A task that failed while the guest still runs is
// ErrShutdownTimeout; the caller reads back the stopped state after a sent shutdown.
func ShutdownWithin(ctx context.Context, what string, p PowerCalls, timeout time.Duration, rep Reporter, stage string) (sent bool, err error) {
	running, _, err := p.Running(ctx)
	if err != nil {
		return false, fmt.Errorf("read %s status: %w", what, err)
	}
	if !running {
		return false, nil
	}
	res, err := p.Shutdown(ctx, int(timeout.Seconds()), false)
	switch {
	case err == nil:
		Report(rep, stage, res)
	case errors.Is(err, pve.ErrTaskFailed):
		// The task fails when the time is up: one read says whether the guest still runs.
		running, _, rerr := p.Running(ctx)
		if rerr != nil {
			return true, fmt.Errorf("read %s status: %w", what, rerr)
		}
		if running {
			return true, fmt.Errorf("%w: %w", ErrShutdownTimeout, err)
		}
	case !errors.Is(err, pve.ErrNotRunning):
		return true, fmt.Errorf("shut down %s: %w", what, err)
	}
	return true, nil
}

// StopIfRunning stops a running guest hard and sends nothing for one that is not running; the
// caller reads back the stopped state.
func StopIfRunning(ctx context.Context, what string, p PowerCalls, rep Reporter, stage string) error {
	running, _, err := p.Running(ctx)
	if err != nil {
		return fmt.Errorf("read %s status: %w", what, err)
	}
	if !running {
		return nil
	}
	res, err := p.Stop(ctx)
	if err != nil && !errors.Is(err, pve.ErrNotRunning) {
		return fmt.Errorf("stop %s: %w", what, err)
	}
	Report(rep, stage, res)
	return nil
}

// RebootRunning reboots a running guest; one that is not running is ErrGuestNotRunning, with
// no task sent. The caller reads back the running state.
func RebootRunning(ctx context.Context, what string, p PowerCalls, rep Reporter, stage string) error {
	running, _, err := p.Running(ctx)
	if err != nil {
		return fmt.Errorf("read %s status: %w", what, err)
	}
	if !running {
		return ErrGuestNotRunning
	}
	res, err := p.Reboot(ctx, 0)
	if errors.Is(err, pve.ErrNotRunning) {
		return ErrGuestNotRunning
	}
	if err != nil {
		return fmt.Errorf("reboot %s: %w", what, err)
	}
	Report(rep, stage, res)
	return nil
}

// ReplaceCalls are the calls a reinstall's destroy makes on a kind's client, adapted by each
// kind like PowerCalls.
type ReplaceCalls interface {
	// DestroyKeepingOtherDisks destroys the guest without destroy-unreferenced-disks (R17),
	// with purge only when asked.
	DestroyKeepingOtherDisks(ctx context.Context, purge bool) (pve.TaskResult, error)
	// ConfigExists reports whether a config is at the guest's vmid.
	ConfigExists(ctx context.Context) (bool, error)
}

// DestroyConfirmed destroys the guest (what names it in errors) and reads back that its config
// is gone.
func DestroyConfirmed(ctx context.Context, what string, r ReplaceCalls, purge bool) error {
	if _, err := r.DestroyKeepingOtherDisks(ctx, purge); err != nil {
		return fmt.Errorf("destroy %s: %w", what, err)
	}
	if exists, err := r.ConfigExists(ctx); exists || err != nil {
		return fmt.Errorf("%s still has a config after destroy (%v)", what, err) //nolint:errorlint // the guest's survival is the failure; the read's error is detail, not its cause
	}
	return nil
}

// Found turns the error of a config read into whether the config is there: not found is no
// error, any other error is one.
func Found(err error) (bool, error) {
	if errors.Is(err, pve.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
