package lxc

import (
	"context"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// A container's restore (R43): the create call with restore=1 and force=1 over the stopped
// container, the archive as ostemplate (docs/proxmox.md §9.3). Proxmox takes every key the
// call does not send from the archive, so the call sends what the plan pays for and what
// pvebill promises: cores, memory, swap, the rootfs in allocation form at the plan's size (which
// also keeps the archive's other mount points out), net0 with its firewall, the stamp.

// RestoreRequest is the restore's create body: the archive with restore=1 and force=1, and the
// plan's resources and the stamp explicitly (R5); never a password (the archive's stays).
func RestoreRequest(g kinds.Guest, spec kinds.CreateSpec, archive string) (pve.LXCCreateRequest, error) {
	req, err := plannedRequest(g, spec, archive)
	if err != nil {
		return pve.LXCCreateRequest{}, err
	}
	req.Restore, req.Force, req.Storage = true, true, spec.Plan.Storage
	return req, nil
}

// RestoreOver restores the archive over the stopped container and waits for the task.
func (m *Module) RestoreOver(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, archive string) (kinds.Guest, error) {
	req, err := RestoreRequest(g, spec, archive)
	if err != nil {
		return g, err
	}
	if _, err := ct(g).Create(ctx, req); err != nil {
		return g, fmt.Errorf("restore container %d: %w", g.VMID, err)
	}
	return g, nil
}

// ConfigureRestored enables the firewall with ipfilter again (the archive's firewall file
// replaced the container's, R9), sets onboot, and reads back the stamp and the plan's cores,
// memory, swap and rootfs size.
func (m *Module) ConfigureRestored(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) error {
	if err := m.Configure(ctx, g, spec, nil); err != nil {
		return err
	}
	cfg, err := ct(g).Config(ctx)
	if err != nil {
		return fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	p := spec.Plan
	if cfg.Cores == nil || cfg.Cores.Int() != p.Cores || cfg.Memory == nil || cfg.Memory.Int() != p.MemoryMiB ||
		cfg.Swap == nil || cfg.Swap.Int() != p.SwapMiB {
		return fmt.Errorf("restored container %d resources do not read back as the plan's", g.VMID)
	}
	if got, want := kinds.RootDiskSize("rootfs", cfg.RootFS), int64(p.DiskGiB)*kinds.GiB; got != want {
		return fmt.Errorf("restored container %d rootfs reads back %d bytes, want %d", g.VMID, got, want)
	}
	return nil
}

var _ kinds.Restorer = (*Module)(nil)
