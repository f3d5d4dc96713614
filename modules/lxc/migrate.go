package lxc

import (
	"context"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// A container moves in restart mode (R53, docs/proxmox.md §17): Proxmox cannot move a running
// container live, so it shuts it down (within the kind's shutdown time-out), copies its
// volumes, and starts it on the target; a failed move starts it again where it was.

var _ kinds.Migrator = (*Module)(nil)

// MigrationBlockers is empty: Proxmox's API has no precondition read for containers before
// PVE 9.0, and that one names only HA rules. The migration's own task reports the rest.
func (m *Module) MigrationBlockers(context.Context, kinds.Guest) ([]string, error) { return nil, nil }

// Migrate moves the container to target in restart mode and waits for the task.
func (m *Module) Migrate(ctx context.Context, g kinds.Guest, target string) error {
	yes := true
	timeout := int(m.shutdownTimeout().Seconds())
	upid, err := ct(g).MigrateAsync(ctx, pve.LXCMigrateRequest{Target: target, Restart: &yes, Timeout: &timeout})
	if err == nil {
		_, err = g.Client.Wait(ctx, upid)
	}
	if err != nil {
		return kinds.MigrationError(g, target, fmt.Errorf("restart-mode migration: %w", err))
	}
	return nil
}
