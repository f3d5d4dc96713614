package pveconf

import (
	"fmt"
	"strconv"
)

// Test-only helpers: production reads sizes through ParseConfigSize and owners through
// ParseVolume, and never prints a VolumeKind or writes a UPID.

// ParseSize is parseSize's byte count alone.
func ParseSize(s string) (bytes int64, err error) {
	b, _, _, err := parseSize(s)
	return b, err
}

// VolumeOwnedBy reports whether Proxmox would count volid as owned by vmid,
// the test container destroy uses before freeing a volume. Bind and device
// mounts and volumes without an owner (iso, vztmpl, snippets) are owned by
// nobody. An unparseable volid is an error.
func VolumeOwnedBy(volid string, vmid int) (owned bool, err error) {
	v, err := ParseVolume(volid)
	if err != nil {
		return false, err
	}
	return v.Kind == VolumeStorage && v.HasOwner && v.Owner == vmid, nil
}

func (k VolumeKind) String() string {
	switch k {
	case VolumeStorage:
		return "storage"
	case VolumeBind:
		return "bind"
	case VolumeDevice:
		return "device"
	}
	return "VolumeKind(" + strconv.Itoa(int(k)) + ")"
}

// String encodes the UPID as PVE::UPID::encode does (upper-case hex).
func (u UPID) String() string {
	return fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:",
		u.Node, u.PID, u.PStart, u.StartTime.Unix(), u.Type, u.ID, u.User)
}
