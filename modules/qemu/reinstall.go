package qemu

import (
	"context"
	"errors"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/reinstall"
)

// A VM reinstall is a re-clone (R30): stop, destroy, clone the template onto the same vmid,
// cloud-init and the plan, start — with the same two phases, blockers and reconciliation as a
// container's. Its vocabulary is the VM's own (R12): disks (scsiN, virtioN, sataN, ideN,
// efidisk0, tpmstate0, unusedN) and the boot disk, never a container's rootfs or mount points.

// ReadForReinstall reads the VM's active and merged config and the template's drives (which
// the clone brings back), labelled. Only GET requests are sent.
func (m *Module) ReadForReinstall(ctx context.Context, g kinds.Guest, p plans.Plan, os string) (reinstall.Read, error) {
	if _, err := p.VMTemplate(os); err != nil {
		return reinstall.Read{}, err
	}
	return readLabelled(ctx, g, func(pve.QEMUConfig) (map[string]bool, error) {
		src, _, err := m.replacementSource(ctx, g, p, os)
		if err != nil {
			return nil, err
		}
		tcfg, err := g.Client.Node(src.Node).QEMU(src.VMID).ConfigCurrent(ctx)
		if err != nil {
			return nil, fmt.Errorf("read template %d config: %w", src.VMID, err)
		}
		back := map[string]bool{}
		for k := range tcfg.Disks {
			back[k] = true
		}
		return back, nil
	})
}

// readLabelled reads the VM's active and merged config and labels its drives and unused
// volumes, a drive named by recreated (given the active config) coming back and the others
// erased (R22). A VM without its service's stamp is read as only existing. Only GET requests
// are sent.
func readLabelled(ctx context.Context, g kinds.Guest, recreated func(cur pve.QEMUConfig) (map[string]bool, error)) (reinstall.Read, error) {
	q := vm(g)
	cur, err := q.ConfigCurrent(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return reinstall.Read{}, nil
	}
	if err != nil {
		return reinstall.Read{}, fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	if !kinds.HasStamp(cur.Description, g) {
		return reinstall.Read{Exists: true}, nil
	}
	merged, err := q.Config(ctx)
	if err != nil {
		return reinstall.Read{}, fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	back, err := recreated(cur)
	if err != nil {
		return reinstall.Read{}, err
	}
	rd := reinstall.Read{Exists: true, Stamped: true, Protected: bool(cur.Protection), Lock: cur.Lock,
		Mounts: classifiedDisks(g.VMID, diskEntries(cur, merged), back), RootKey: bootDisk(cur)}
	// A VM with no boot disk (only an EFI or TPM disk, a CD drive, or nothing) has nothing to
	// shrink and nothing missing: the re-clone brings the template's boot disk (R24, R25).
	rd.NoRoot = rd.RootKey == ""
	return rd, nil
}

// Shape puts the boot disk's sizes and the disks into a preview.
func (m *Module) Shape(pv *reinstall.Preview, f reinstall.Facts) {
	sz := reinstall.SizesOf(f.Mounts, f.RootKey, f.PlannedBytes)
	if f.NoRoot {
		sz.CurrentDisplay = "none"
	}
	pv.BootDisk, pv.Disks, pv.RootKey, pv.NoRoot = &sz, f.Mounts, f.RootKey, f.NoRoot
	if pv.Disks == nil {
		pv.Disks = []reinstall.Mount{}
	}
}

// StopForReinstall stops the VM if it runs, reads back that it is stopped, and reports whether
// it is HA-managed.
func (m *Module) StopForReinstall(ctx context.Context, g kinds.Guest) (bool, error) {
	return kinds.StopConfirmed(ctx, fmt.Sprintf("VM %d", g.VMID), vmPower{vm(g)})
}

// DestroyForReinstall destroys the VM without destroy-unreferenced-disks (R17), with purge only
// when asked, and reads back that the config is gone.
func (m *Module) DestroyForReinstall(ctx context.Context, g kinds.Guest, purge bool) error {
	return kinds.DestroyConfirmed(ctx, fmt.Sprintf("VM %d", g.VMID), vmPower{vm(g)}, purge)
}

// Exists reports whether a VM config is at the vmid.
func (m *Module) Exists(ctx context.Context, g kinds.Guest) (bool, error) {
	return vmPower{vm(g)}.ConfigExists(ctx)
}

// Recreate clones the plan's template onto the vmid and configures the clone: cloud-init, the
// plan, the firewall (Create). The clone stays on the guest's node when a template serves it
// (its own, or a shared one with target); otherwise it is made on a template's node, and the
// guest returned is there.
func (m *Module) Recreate(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) (kinds.Guest, error) {
	src, node, err := m.replacementSource(ctx, g, spec.Plan, spec.OS)
	if err != nil {
		return g, err
	}
	g.Node, spec.Template = node, &src
	return g, m.Create(ctx, g, spec, nil)
}

// Reconfigure reads back what a reinstall promises: Recreate configured the clone already.
func (m *Module) Reconfigure(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) error {
	planned := int64(spec.Plan.DiskGiB) * kinds.GiB
	ins, err := m.Inspect(ctx, g)
	if err != nil {
		return err
	}
	if !ins.Exists || !ins.Stamped || !ins.OnBoot || ins.DiskBytes < planned {
		return fmt.Errorf("VM %d does not read back stamped, onboot, with a %d-byte boot disk", g.VMID, planned)
	}
	return nil
}

// RootDiskFits reports whether the boot disk is at least the plan's size, as a re-cloned VM's
// is (the template's may be larger).
func (m *Module) RootDiskFits(have, planned int64) bool { return have >= planned }

var (
	_ kinds.Reinstaller = (*Module)(nil)
	_ reinstall.Reader  = (*Module)(nil)
)

func (c vmPower) DestroyKeepingOtherDisks(ctx context.Context, purge bool) (pve.TaskResult, error) {
	return c.Delete(ctx, pve.QEMUDeleteOptions{Purge: purge})
}

func (c vmPower) ConfigExists(ctx context.Context) (bool, error) {
	_, err := c.ConfigCurrent(ctx)
	return kinds.Found(err)
}
