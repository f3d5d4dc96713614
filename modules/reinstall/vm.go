package reinstall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"pvebill/modules"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// A VM reinstall is a re-clone (R30): stop, destroy, clone the template onto the same vmid,
// cloud-init and the plan, start — with the same two phases, blockers and reconciliation. Its
// vocabulary is the VM's own (R12): disks (scsiN, virtioN, sataN, ideN, efidisk0, tpmstate0,
// unusedN) and the boot disk, never a container's rootfs or mount points.

// vmDiskBuses orders a VM's disk keys for display.
var vmDiskBuses = []string{"scsi", "virtio", "sata", "ide", "efidisk", "tpmstate", "unused"}

// diskKeyOrder sorts VM disk keys by bus, then number.
func diskKeyOrder(key string) (int, int) {
	for i, bus := range vmDiskBuses {
		if n, ok := strings.CutPrefix(key, bus); ok {
			if v, err := strconv.Atoi(n); err == nil {
				return i, v
			}
		}
	}
	return len(vmDiskBuses), 0
}

// isVMDiskKey reports whether key names a VM drive or an unusedN.
func isVMDiskKey(key string) bool {
	b, _ := diskKeyOrder(key)
	return b < len(vmDiskBuses)
}

// ClassifyDisk labels one drive of VM vmid. Empty and physical CD drives (none, cdrom) hold no
// data and are skipped (ok false). recreated names the drive keys the template has: the clone
// brings those back (new, from the template); every other drive is removed.
func ClassifyDisk(vmid int, e Entry, recreated map[string]bool) (m Mount, ok bool) {
	m = Mount{Key: e.Key, Pending: e.Pending, Data: Unknown, MountAfter: Removed}
	if recreated[e.Key] {
		m.MountAfter = Recreated
	}
	vol := ""
	for i, part := range strings.Split(e.Value, ",") {
		k, v, keyed := strings.Cut(part, "=")
		switch {
		case !keyed && i == 0:
			vol = part
		case keyed && k == "file":
			vol = v
		case keyed && k == "size":
			if b, known, err := pveconf.ParseConfigSize(v); err == nil && known {
				m.SizeBytes = &b
			}
		}
	}
	m.Volume = vol
	if vol == "none" || vol == "cdrom" {
		return m, false
	}
	if vol == "" {
		m.Volume = volumePart(e.Value)
		return m, true
	}
	pv, err := pveconf.ParseVolume(vol)
	if err != nil {
		return m, true
	}
	labelVolume(&m, pv, vmid)
	return m, true
}

// ClassifiedDisks labels every drive of a VM's config entries (active and pending), sorted by
// bus and number, active before pending.
func ClassifiedDisks(vmid int, entries []Entry, recreated map[string]bool) []Mount {
	var out []Mount
	seen := map[[2]string]bool{}
	for _, e := range entries {
		if !isVMDiskKey(e.Key) || e.Value == "" {
			continue
		}
		k := [2]string{e.Key, e.Value}
		if seen[k] {
			continue
		}
		seen[k] = true
		if m, ok := ClassifyDisk(vmid, e, recreated); ok {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		bi, ni := diskKeyOrder(out[i].Key)
		bj, nj := diskKeyOrder(out[j].Key)
		if bi != bj {
			return bi < bj
		}
		if ni != nj {
			return ni < nj
		}
		return !out[i].Pending && out[j].Pending
	})
	return out
}

// vmEntries are the drives of a VM's active config and, where the merged (pending) config
// differs, the pending values.
func vmEntries(cur, merged pve.QEMUConfig) []Entry {
	var out []Entry
	add := func(cfg pve.QEMUConfig, pending bool) {
		for k, v := range cfg.Disks {
			if !pending || cur.Disks[k] != v {
				out = append(out, Entry{Key: k, Value: v, Pending: pending})
			}
		}
		for i, v := range cfg.Unused {
			k := "unused" + strconv.Itoa(i)
			if !pending || cur.Unused[i] != v {
				out = append(out, Entry{Key: k, Value: v, Pending: pending})
			}
		}
	}
	add(cur, false)
	add(merged, true)
	return out
}

// BootDisk returns the key of a VM's boot disk: the first disk of boot=order=…, else the first
// of scsi0, virtio0, sata0, ide0 that is not a CD drive; "" when there is none.
func BootDisk(cfg pve.QEMUConfig) string {
	isDisk := func(k string) bool {
		v, ok := cfg.Disks[k]
		return ok && !strings.Contains(v, "media=cdrom")
	}
	if order, ok := strings.CutPrefix(cfg.Boot, "order="); ok {
		for _, k := range strings.Split(order, ";") {
			if isDisk(k) {
				return k
			}
		}
	}
	for _, k := range []string{"scsi0", "virtio0", "sata0", "ide0"} {
		if isDisk(k) {
			return k
		}
	}
	return ""
}

// locate finds a guest in the cluster listing: its node and type ("" when absent).
func locate(ctx context.Context, cl Cluster, vmid int) (node, typ string, err error) {
	rows, err := cl.Client.Cluster().Resources(ctx, "vm")
	if err != nil {
		return "", "", fmt.Errorf("list guests of %s: %w", cl.Name, err)
	}
	for _, r := range rows {
		if r.VMID.Int() == vmid && (r.Type == "lxc" || r.Type == "qemu") {
			return r.Node, r.Type, nil
		}
	}
	return "", "", nil
}

// observeVM is observe for a VM: its active and merged config, the template's drives (which the
// clone brings back), protected backups and our own operations. Only GET requests are sent.
func (s *Service) observeVM(ctx context.Context, cl Cluster, vmid int, serviceID, except string, plannedBytes int64, tmpl int) (observation, error) {
	own, err := s.ownFacts(ctx, serviceID, except)
	if err != nil {
		return observation{}, err
	}
	obs := observation{facts: own}
	obs.facts.PlannedBytes = plannedBytes
	node, typ, err := locate(ctx, cl, vmid)
	if err != nil {
		return obs, err
	}
	if typ == "lxc" {
		return obs, notOurs(vmid)
	}
	if node == "" {
		return obs, nil
	}
	obs.node = node
	q := cl.Client.Node(node).QEMU(vmid)
	cur, err := q.ConfigCurrent(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return obs, nil
	}
	if err != nil {
		return obs, fmt.Errorf("read VM %d config: %w", vmid, err)
	}
	if !modules.HasStamp(cur.Description, serviceID) {
		s.log.Warn("guest at the service's vmid does not carry its stamp; refusing", "service_id", serviceID, "vmid", vmid)
		return obs, notOurs(vmid)
	}
	merged, err := q.Config(ctx)
	if err != nil {
		return obs, fmt.Errorf("read VM %d config: %w", vmid, err)
	}
	tnode, ttyp, err := locate(ctx, cl, tmpl)
	if err != nil {
		return obs, err
	}
	if ttyp != "qemu" {
		return obs, fmt.Errorf("template %d not found on cluster %s", tmpl, cl.Name)
	}
	tcfg, err := cl.Client.Node(tnode).QEMU(tmpl).ConfigCurrent(ctx)
	if err != nil {
		return obs, fmt.Errorf("read template %d config: %w", tmpl, err)
	}
	recreated := map[string]bool{}
	for k := range tcfg.Disks {
		recreated[k] = true
	}
	obs.facts.Exists = true
	obs.facts.Protected = bool(cur.Protection)
	obs.facts.Lock = cur.Lock
	obs.facts.Mounts = ClassifiedDisks(vmid, vmEntries(cur, merged), recreated)
	obs.facts.RootKey = BootDisk(cur)
	if obs.facts.RootKey == "" {
		obs.facts.RootKey = "boot"
	}
	if obs.facts.ProtectedBackup, err = s.protectedBackup(ctx, cl, node, vmid); err != nil {
		return obs, err
	}
	return obs, nil
}
