package lxc

import (
	"context"
	"errors"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/reinstall"
)

// A container's reinstall (R22, R26–R28): stop, destroy without destroy-unreferenced-disks,
// create from the plan with the short create body, configure, start. Its vocabulary is the
// container's own (R12): the rootfs and mount points mpN and unusedN.

// ReadForReinstall reads the container's active config and its pending section, labelled. Only
// GET requests are sent.
func (m *Module) ReadForReinstall(ctx context.Context, g kinds.Guest, _ plans.Plan, _ string) (reinstall.Read, error) {
	c := ct(g)
	cfg, err := c.ConfigCurrent(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return reinstall.Read{}, nil
	}
	if err != nil {
		return reinstall.Read{}, fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	if !kinds.HasStamp(cfg.Description, g) {
		return reinstall.Read{Exists: true}, nil
	}
	rd := reinstall.Read{Exists: true, Stamped: true, Protected: bool(cfg.Protection), Lock: cfg.Lock}
	pending, err := c.Pending(ctx)
	if err != nil {
		return rd, fmt.Errorf("read container %d pending config: %w", g.VMID, err)
	}
	rd.Mounts, rd.RootKey = classified(g.VMID, entriesOf(pending)), rootKey
	return rd, nil
}

// Shape puts the rootfs sizes and the mounts into a preview.
func (m *Module) Shape(pv *reinstall.Preview, f reinstall.Facts) {
	sz := reinstall.SizesOf(f.Mounts, rootKey, f.PlannedBytes)
	pv.Rootfs, pv.RootKey = &sz, rootKey
	if f.Mounts != nil {
		pv.Mounts = f.Mounts
	}
}

// StopForReinstall stops the container if it runs, reads back that it is stopped, and reports
// whether it is HA-managed.
func (m *Module) StopForReinstall(ctx context.Context, g kinds.Guest) (bool, error) {
	return kinds.StopConfirmed(ctx, fmt.Sprintf("container %d", g.VMID), ctPower{ct(g)})
}

// DestroyForReinstall destroys the container without destroy-unreferenced-disks (R17), with
// purge only when asked, and reads back that the config is gone.
func (m *Module) DestroyForReinstall(ctx context.Context, g kinds.Guest, purge bool) error {
	return kinds.DestroyConfirmed(ctx, fmt.Sprintf("container %d", g.VMID), ctPower{ct(g)}, purge)
}

// Exists reports whether a container config is at the vmid.
func (m *Module) Exists(ctx context.Context, g kinds.Guest) (bool, error) {
	return ctPower{ct(g)}.ConfigExists(ctx)
}

// Recreate creates the container again on its node from the plan, in allocation form and with
// the stamp (the short create body, CreateRequest).
func (m *Module) Recreate(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) (kinds.Guest, error) {
	req, err := CreateRequest(g, spec)
	if err != nil {
		return g, err
	}
	if _, err := ct(g).Create(ctx, req); err != nil {
		return g, fmt.Errorf("create container %d: %w", g.VMID, err)
	}
	return g, nil
}

// Reconfigure is the container's Configure (firewall, onboot, read back with the stamp).
func (m *Module) Reconfigure(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) error {
	return m.Configure(ctx, g, spec, nil)
}

// RootDiskFits reports whether the rootfs is exactly the plan's size, as a reinstalled
// container's is.
func (m *Module) RootDiskFits(have, planned int64) bool { return have == planned }

var (
	_ kinds.Reinstaller = (*Module)(nil)
	_ reinstall.Reader  = (*Module)(nil)
)

func (c ctPower) DestroyKeepingOtherDisks(ctx context.Context, purge bool) (pve.TaskResult, error) {
	return c.Delete(ctx, pve.LXCDeleteOptions{Purge: purge})
}

func (c ctPower) ConfigExists(ctx context.Context) (bool, error) {
	_, err := c.ConfigCurrent(ctx)
	return kinds.Found(err)
}

// entriesOf turns the rows of GET .../pending into config entries: each key's active value,
// and its pending value when that differs.
func entriesOf(items []pve.PendingItem) []reinstall.Entry {
	var out []reinstall.Entry
	for _, it := range items {
		v, p := string(it.Value), string(it.Pending)
		if v != "" {
			out = append(out, reinstall.Entry{Key: it.Key, Value: v})
		}
		if p != "" && p != v {
			out = append(out, reinstall.Entry{Key: it.Key, Value: p, Pending: true})
		}
	}
	return out
}
