package kinds

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"pvebill/modules/pve"
)

// Snapshot is one snapshot of a guest (R44).
type Snapshot struct {
	Name        string
	Description string
	// Time is when it was taken (UTC).
	Time time.Time
	// Parent is the snapshot it descends from; empty for the first.
	Parent string
}

// ErrSnapshotReadBack is a snapshot change whose task ended well but whose effect the list does
// not show.
var ErrSnapshotReadBack = errors.New("snapshot change not read back")

// SnapshotCalls are a guest's snapshot calls, the same for every kind (pve.SnapshotClient), with
// the kind's power calls for a rollback's restart. Each kind's snapshot file builds one.
type SnapshotCalls struct {
	What  string // names the guest in errors: "container 5001"
	Snaps *pve.SnapshotClient
	Power PowerCalls
}

// List reads the snapshots, oldest first (Proxmox lists them in no order).
func (c SnapshotCalls) List(ctx context.Context) ([]Snapshot, string, error) {
	l, err := c.Snaps.List(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("list snapshots of %s: %w", c.What, err)
	}
	out := make([]Snapshot, 0, len(l.Snapshots))
	for _, s := range l.Snapshots {
		out = append(out, Snapshot{Name: s.Name, Description: s.Description, Parent: s.Parent,
			Time: time.Unix(int64(s.SnapTime), 0).UTC()})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].Name < out[j].Name
	})
	return out, l.Current.Parent, nil
}

func (c SnapshotCalls) listed(ctx context.Context, name string) (bool, string, error) {
	l, parent, err := c.List(ctx)
	if err != nil {
		return false, "", err
	}
	for _, s := range l {
		if s.Name == name {
			return true, parent, nil
		}
	}
	return false, parent, nil
}

// Create takes the snapshot and reads back that it is listed.
func (c SnapshotCalls) Create(ctx context.Context, name, description string, rep Reporter, stage string) error {
	res, err := c.Snaps.Create(ctx, pve.SnapshotCreateRequest{SnapName: name, Description: description})
	if err != nil {
		return fmt.Errorf("snapshot %s as %q: %w", c.What, name, err)
	}
	Report(rep, stage, res)
	ok, _, err := c.listed(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s has no snapshot %q after its create", ErrSnapshotReadBack, c.What, name)
	}
	return err
}

// Delete deletes the snapshot and reads back that it is gone.
func (c SnapshotCalls) Delete(ctx context.Context, name string, rep Reporter, stage string) error {
	res, err := c.Snaps.Delete(ctx, name)
	if err != nil {
		return fmt.Errorf("delete snapshot %q of %s: %w", name, c.What, err)
	}
	Report(rep, stage, res)
	ok, _, err := c.listed(ctx, name)
	if err == nil && ok {
		err = fmt.Errorf("%w: %s still lists snapshot %q after its delete", ErrSnapshotReadBack, c.What, name)
	}
	return err
}

// Rollback rolls back to the snapshot. Proxmox stops the guest first; a guest that was running
// is started again by the same task (start=1). It reads back that the guest descends from the
// snapshot and that it runs exactly when it ran before.
func (c SnapshotCalls) Rollback(ctx context.Context, name string, rep Reporter, stage string) error {
	running, _, err := c.Power.Running(ctx)
	if err != nil {
		return fmt.Errorf("read %s status: %w", c.What, err)
	}
	res, err := c.Snaps.Rollback(ctx, name, pve.SnapshotRollbackRequest{Start: running})
	if err != nil {
		return fmt.Errorf("roll %s back to %q: %w", c.What, name, err)
	}
	Report(rep, stage, res)
	_, parent, err := c.listed(ctx, name)
	if err != nil {
		return err
	}
	if parent != name {
		return fmt.Errorf("%w: %s descends from %q after a rollback to %q", ErrSnapshotReadBack, c.What, parent, name)
	}
	now, _, err := c.Power.Running(ctx)
	if err != nil {
		return fmt.Errorf("read %s status: %w", c.What, err)
	}
	if now != running {
		return fmt.Errorf("%w: %s runs=%v after the rollback, %v before", ErrSnapshotReadBack, c.What, now, running)
	}
	return nil
}
