package reinstall

import (
	"sort"
	"strconv"
	"strings"

	"pvebill/modules/pve/pveconf"
)

// DataLabel says what a reinstall does to the bytes behind one mount of the container's config
// (R19). It speaks about the data, never about the mount: that is MountFate.
type DataLabel string

// The data labels (R19).
const (
	// Erased: a volume owned by this guest; destroy frees it.
	Erased DataLabel = "erased"
	// Excluded: a storage volume owned by another guest (or by none); destroy skips it and the
	// data stays with its owner.
	Excluded DataLabel = "excluded"
	// Untouched: a bind or device mount, an absolute host path; the host's data is not touched.
	Untouched DataLabel = "untouched"
	// Unknown: the mount could not be classified; it blocks (mount_unclassifiable).
	Unknown DataLabel = "unknown"
	// Preserved: kept and re-attached. In the vocabulary so that a later version need not file
	// it under another name; not offered, and Classify never returns it.
	Preserved DataLabel = "preserved"
)

// MountFate says whether the mount exists on the new container (R20).
type MountFate string

// Mount fates: the create call only ever sets the root filesystem.
const (
	// Recreated: rootfs, new, empty, at the plan's size.
	Recreated MountFate = "recreated"
	// Removed: every other mount; it is not on the new container whatever happened to its bytes.
	Removed MountFate = "removed"
)

// FateOf returns the fate of a mount key: recreated for rootfs, removed for everything else.
func FateOf(key string) MountFate {
	if key == "rootfs" {
		return Recreated
	}
	return Removed
}

// Mount is one mount of the config with its labels, as the preview shows it (docs/api.md Reinstall).
type Mount struct {
	Key        string    `json:"key"`
	Volume     string    `json:"volume"`
	Path       string    `json:"path,omitempty"`
	OwnerVMID  *int      `json:"owner_vmid"`
	Data       DataLabel `json:"data"`
	MountAfter MountFate `json:"mount_after"`
	// Pending marks a value from the pending section of the config; Proxmox's destroy walks it
	// as well as the active one.
	Pending bool `json:"pending,omitempty"`
	// SizeBytes is the size= of the mount when it is known.
	SizeBytes *int64 `json:"size_bytes,omitempty"`
}

// Entry is one key of the config: its active value, or (Pending) a value waiting in the pending
// section.
type Entry struct {
	Key     string
	Value   string
	Pending bool
}

// Classify labels one rootfs, mpN or unusedN value of container vmid. Ownership is read from the
// volume id the way the storage plugins parse it (R21, pveconf.ParseVolume); destroy checks the
// name only, so a volume named for vmid is erased even if another guest has it attached, and one
// named for another guest is excluded even if only this guest used it. A value that cannot be
// parsed is Unknown. Classify never returns Preserved.
func Classify(vmid int, e Entry) Mount {
	m := Mount{Key: e.Key, MountAfter: FateOf(e.Key), Pending: e.Pending, Data: Unknown, Volume: volumePart(e.Value)}
	mp, err := pveconf.ParseMountPoint(e.Key, e.Value)
	if err != nil {
		return m
	}
	m.Volume, m.Path = mp.Volume, mp.Path
	if mp.SizeKnown {
		b := mp.SizeBytes
		m.SizeBytes = &b
	}
	vol, err := mp.ParseVolume()
	if err != nil {
		return m
	}
	labelVolume(&m, vol, vmid)
	return m
}

// labelVolume sets what happens to a parsed volume's data when guest vmid is destroyed: a bind
// mount or device is untouched, a storage volume named for vmid is erased, any other one (another
// guest's, or nobody's) is excluded; its owner is recorded when the name carries one.
func labelVolume(m *Mount, vol pveconf.Volume, vmid int) {
	switch vol.Kind {
	case pveconf.VolumeBind, pveconf.VolumeDevice:
		m.Data = Untouched
	case pveconf.VolumeStorage:
		if vol.HasOwner {
			owner := vol.Owner
			m.OwnerVMID = &owner
		}
		if vol.HasOwner && vol.Owner == vmid {
			m.Data = Erased
		} else {
			m.Data = Excluded
		}
	}
}

// volumePart is the first comma-separated part of a value (what a confirmation names for a
// value that does not parse).
func volumePart(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimPrefix(first, "volume=")
}

// Classified labels every mount entry of a config (rootfs, mpN, unusedN; active and pending).
// Other keys are ignored. An entry whose pending value equals an active one of the same key is
// listed once. The result is sorted by key (rootfs first, then mpN, then unusedN, numerically),
// active before pending.
func Classified(vmid int, entries []Entry) []Mount {
	var out []Mount
	seen := map[[2]string]bool{}
	for _, e := range entries {
		if !pveconf.IsMountKey(e.Key) || e.Value == "" {
			continue
		}
		k := [2]string{e.Key, e.Value}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, Classify(vmid, e))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := keyOrder(out[i].Key), keyOrder(out[j].Key)
		if a != b {
			return a < b
		}
		return !out[i].Pending && out[j].Pending
	})
	return out
}

// keyOrder sorts rootfs, mp0..mp255, unused0..unused255.
func keyOrder(key string) int {
	if key == "rootfs" {
		return 0
	}
	if n, ok := strings.CutPrefix(key, "mp"); ok {
		i, _ := strconv.Atoi(n)
		return 1 + i
	}
	n, _ := strings.CutPrefix(key, "unused")
	i, _ := strconv.Atoi(n)
	return 1 + pveconf.MaxMountPoints + i
}

// rootOf returns the active mount named key.
func rootOf(mounts []Mount, key string) (Mount, bool) {
	for _, m := range mounts {
		if m.Key == key && !m.Pending {
			return m, true
		}
	}
	return Mount{}, false
}
