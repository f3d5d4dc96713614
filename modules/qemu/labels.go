package qemu

import (
	"sort"
	"strconv"
	"strings"

	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
	"pvebill/modules/reinstall"
)

// A VM's disks as a reinstall labels them (R30): the VM's own vocabulary (R12) — disks (scsiN,
// virtioN, sataN, ideN, efidisk0, tpmstate0, unusedN) and the boot disk — lives here; the
// reinstall package knows only labelled mounts.

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

// classifyDisk labels one drive of VM vmid. Empty and physical CD drives (none, cdrom) hold no
// data and are skipped (ok false). recreated names the drive keys the template has: the clone
// brings those back (new, from the template); every other drive is removed.
func classifyDisk(vmid int, e reinstall.Entry, recreated map[string]bool) (m reinstall.Mount, ok bool) {
	m = reinstall.Mount{Key: e.Key, Pending: e.Pending, Data: reinstall.Unknown, MountAfter: reinstall.Removed}
	if recreated[e.Key] {
		m.MountAfter = reinstall.Recreated
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
		m.Volume = reinstall.VolumePart(e.Value)
		return m, true
	}
	pv, err := pveconf.ParseVolume(vol)
	if err != nil {
		return m, true
	}
	reinstall.LabelVolume(&m, pv, vmid)
	return m, true
}

// classifiedDisks labels every drive of a VM's config entries (active and pending), sorted by
// bus and number, active before pending.
func classifiedDisks(vmid int, entries []reinstall.Entry, recreated map[string]bool) []reinstall.Mount {
	var out []reinstall.Mount
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
		if m, ok := classifyDisk(vmid, e, recreated); ok {
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

// diskEntries are the drives of a VM's active config and, where the merged (pending) config
// differs, the pending values.
func diskEntries(cur, merged pve.QEMUConfig) []reinstall.Entry {
	var out []reinstall.Entry
	add := func(cfg pve.QEMUConfig, pending bool) {
		for k, v := range cfg.Disks {
			if !pending || cur.Disks[k] != v {
				out = append(out, reinstall.Entry{Key: k, Value: v, Pending: pending})
			}
		}
		for i, v := range cfg.Unused {
			k := "unused" + strconv.Itoa(i)
			if !pending || cur.Unused[i] != v {
				out = append(out, reinstall.Entry{Key: k, Value: v, Pending: pending})
			}
		}
	}
	add(cur, false)
	add(merged, true)
	return out
}
