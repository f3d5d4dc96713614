package qemu

import (
	"context"
	"fmt"
	"strings"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// A VM moves online (R53, docs/proxmox.md §17): Proxmox's precondition read names what
// would stop it (local devices, an ISO in a drive on local storage), and the migration carries
// the VM's local disks along while it runs (with-local-disks); a stopped VM's always move.

var _ kinds.Migrator = (*Module)(nil)

// MigrationBlockers reads the precondition: the local resources, and every CD-ROM drive holding
// an ISO on local storage (the precondition lists those as local disks, not as blockers; the
// migration then fails on them).
func (m *Module) MigrationBlockers(ctx context.Context, g kinds.Guest) ([]string, error) {
	pre, err := vm(g).MigratePrecondition(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration precondition of VM %d: %w", g.VMID, err)
	}
	return blockersOf(pre), nil
}

func blockersOf(pre pve.MigratePrecondition) []string {
	var out []string
	out = append(out, pre.LocalResources...)
	for _, d := range pre.LocalDisks {
		if bool(d.CDROM) && !bool(d.IsCloudInit) {
			out = append(out, d.DriveName+" (local cdrom image "+d.VolID+")")
		}
	}
	return out
}

// Migrate moves the VM to target: online when it runs, with its attached local disks.
func (m *Module) Migrate(ctx context.Context, g kinds.Guest, target string) error {
	pre, err := vm(g).MigratePrecondition(ctx)
	if err != nil {
		return fmt.Errorf("migration precondition of VM %d: %w", g.VMID, err)
	}
	if b := blockersOf(pre); len(b) > 0 {
		return kinds.Refused(strings.Join(b, ", "))
	}
	req := pve.QEMUMigrateRequest{Target: target}
	if bool(pre.Running) {
		yes := true
		req.Online = &yes
		for _, d := range pre.LocalDisks {
			if bool(d.IsAttached) {
				req.WithLocalDisks = &yes
				break
			}
		}
	}
	upid, err := vm(g).MigrateAsync(ctx, req)
	if err == nil {
		_, err = g.Client.Wait(ctx, upid)
	}
	return kinds.MigrationError(g, target, err)
}
