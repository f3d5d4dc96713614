package reinstall

import (
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

// LabelVolume sets what happens to a parsed volume's data when guest vmid is destroyed: a bind
// mount or device is untouched, a storage volume named for vmid is erased, any other one (another
// guest's, or nobody's) is excluded; its owner is recorded when the name carries one.
func LabelVolume(m *Mount, vol pveconf.Volume, vmid int) {
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

// VolumePart is the first comma-separated part of a value (what a confirmation names for a
// value that does not parse).
func VolumePart(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimPrefix(first, "volume=")
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
