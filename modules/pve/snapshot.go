package pve

import (
	"context"
	"net/http"
	"net/url"
)

// SnapshotClient addresses the snapshots of one guest (container or VM); the calls are the
// same for both kinds (docs/proxmox.md §15).
type SnapshotClient struct{ g guest }

// Snapshots returns the container's snapshot client.
func (l *LXCClient) Snapshots() *SnapshotClient { return &SnapshotClient{g: l.g} }

// Snapshots returns the VM's snapshot client.
func (q *QEMUClient) Snapshots() *SnapshotClient { return &SnapshotClient{g: q.g} }

// SnapshotList is GET …/snapshot split in two: the snapshots, in Proxmox's order (which is none
// in particular), and the "current" pseudo-entry, whose Parent names the snapshot the guest
// descends from.
type SnapshotList struct {
	Snapshots []Snapshot
	Current   Snapshot
}

// List reads GET …/snapshot and sets the "current" pseudo-entry apart.
func (s *SnapshotClient) List(ctx context.Context) (SnapshotList, error) {
	var all []Snapshot
	if err := s.g.callValues(ctx, http.MethodGet, "/snapshot", nil, &all); err != nil {
		return SnapshotList{}, err
	}
	out := SnapshotList{Snapshots: make([]Snapshot, 0, len(all))}
	for _, sn := range all {
		if sn.Name == CurrentSnapshot {
			out.Current = sn
			continue
		}
		out.Snapshots = append(out.Snapshots, sn)
	}
	return out, nil
}

// CreateAsync sends POST …/snapshot (task vzsnapshot or qmsnapshot; the guest holds the lock
// "snapshot" meanwhile).
func (s *SnapshotClient) CreateAsync(ctx context.Context, req SnapshotCreateRequest) (string, error) {
	if err := checkIdent("snapname", req.SnapName); err != nil {
		return "", err
	}
	return s.g.start(ctx, http.MethodPost, "/snapshot", req)
}

// Create takes a snapshot and waits for the task.
func (s *SnapshotClient) Create(ctx context.Context, req SnapshotCreateRequest) (TaskResult, error) {
	upid, err := s.CreateAsync(ctx, req)
	return s.g.wait(ctx, upid, err)
}

// DeleteAsync sends DELETE …/snapshot/{name} (task vzdelsnapshot or qmdelsnapshot; lock
// "snapshot-delete").
func (s *SnapshotClient) DeleteAsync(ctx context.Context, name string) (string, error) {
	if err := checkIdent("snapname", name); err != nil {
		return "", err
	}
	return s.g.startValues(ctx, http.MethodDelete, "/snapshot/"+url.PathEscape(name), nil)
}

// Delete deletes a snapshot and waits for the task.
func (s *SnapshotClient) Delete(ctx context.Context, name string) (TaskResult, error) {
	upid, err := s.DeleteAsync(ctx, name)
	return s.g.wait(ctx, upid, err)
}

// RollbackAsync sends POST …/snapshot/{name}/rollback (task vzrollback or qmrollback; lock
// "rollback"). Proxmox stops the guest first; req.Start starts it again afterwards.
func (s *SnapshotClient) RollbackAsync(ctx context.Context, name string, req SnapshotRollbackRequest) (string, error) {
	if err := checkIdent("snapname", name); err != nil {
		return "", err
	}
	return s.g.start(ctx, http.MethodPost, "/snapshot/"+url.PathEscape(name)+"/rollback", req)
}

// Rollback rolls the guest back to a snapshot and waits for the task.
func (s *SnapshotClient) Rollback(ctx context.Context, name string, req SnapshotRollbackRequest) (TaskResult, error) {
	upid, err := s.RollbackAsync(ctx, name, req)
	return s.g.wait(ctx, upid, err)
}
