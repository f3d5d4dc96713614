package reinstall

import (
	"sort"
	"strconv"
	"strings"

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

// DiskEntries are the drives of a VM's active config and, where the merged (pending) config
// differs, the pending values.
func DiskEntries(cur, merged pve.QEMUConfig) []Entry {
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
