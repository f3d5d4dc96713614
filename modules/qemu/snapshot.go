package qemu

import (
	"context"
	"fmt"

	"pvebill/modules/kinds"
)

// Stages of the snapshot tasks in an operation's result.
const (
	StageSnapshot         = "qmsnapshot"
	StageSnapshotDelete   = "qmdelsnapshot"
	StageSnapshotRollback = "qmrollback"
)

func vmSnapshots(g kinds.Guest) kinds.SnapshotCalls {
	c := vm(g)
	return kinds.SnapshotCalls{What: fmt.Sprintf("VM %d", g.VMID), Snaps: c.Snapshots(), Power: vmPower{c}}
}

// Snapshots lists the VM's snapshots, oldest first (R44).
func (m *Module) Snapshots(ctx context.Context, g kinds.Guest) ([]kinds.Snapshot, error) {
	out, _, err := vmSnapshots(g).List(ctx)
	return out, err
}

// CreateSnapshot snapshots the VM without its RAM (docs/proxmox.md §15: every disk must be on a
// storage that can, qcow2 on a file storage; CD-ROM and cloud-init drives are skipped) and reads
// back that the snapshot is listed.
func (m *Module) CreateSnapshot(ctx context.Context, g kinds.Guest, name, description string, rep kinds.Reporter) error {
	return vmSnapshots(g).Create(ctx, name, description, rep, StageSnapshot)
}

// DeleteSnapshot deletes a snapshot and reads back that it is gone.
func (m *Module) DeleteSnapshot(ctx context.Context, g kinds.Guest, name string, rep kinds.Reporter) error {
	return vmSnapshots(g).Delete(ctx, name, rep, StageSnapshotDelete)
}

// RollbackSnapshot rolls the VM back (Proxmox stops it first), starts it again when it
// ran, and reads both back.
func (m *Module) RollbackSnapshot(ctx context.Context, g kinds.Guest, name string, rep kinds.Reporter) error {
	return vmSnapshots(g).Rollback(ctx, name, rep, StageSnapshotRollback)
}

var _ kinds.Snapshotter = (*Module)(nil)
