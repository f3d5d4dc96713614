package plans

import (
	"slices"

	"pvebill/i18n"
)

// The reasons the snapshot capability is refused for a plan (R44).
const (
	ReasonSnapshotsOff        = "capability.snapshots_off"
	ReasonStorageCannotSnap   = "capability.storage_cannot_snapshot"
	ReasonStorageTypeNotKnown = "capability.storage_type_unknown"
)

// everyVolumeSnapshots are the Proxmox storage types that snapshot every volume
// (docs/proxmox.md §15: volume_has_feature 'snapshot' of each storage plugin): LVM-thin, ZFS
// (local or over iSCSI), Ceph RBD and btrfs. Thick LVM and iSCSI LUNs cannot at all.
var everyVolumeSnapshots = []string{"lvmthin", "zfspool", "zfs", "rbd", "btrfs"}

// qcow2Snapshots are the file storages (dir, NFS, CIFS, GlusterFS), which snapshot only qcow2
// files: a kind whose volumes there are qcow2 can be snapshotted on them (KindRules.Snapshots).
var qcow2Snapshots = []string{"dir", "nfs", "cifs", "glusterfs"}

// StorageSnapshotsEveryVolume reports whether a storage of this Proxmox type snapshots every
// volume, whatever its format.
func StorageSnapshotsEveryVolume(storageType string) bool {
	return slices.Contains(everyVolumeSnapshots, storageType)
}

// StorageSnapshotsQcow2 reports whether a storage of this Proxmox type snapshots qcow2 files
// (and every volume of a storage that snapshots all).
func StorageSnapshotsQcow2(storageType string) bool {
	return StorageSnapshotsEveryVolume(storageType) || slices.Contains(qcow2Snapshots, storageType)
}

// snapshotCapability refines an available snapshot capability by the plan: off at
// snapshots_max 0, refused permanently on a storage the kind cannot snapshot on, and
// temporarily while the storage's type is not known.
func snapshotCapability(p Plan, kind KindRules) State {
	switch {
	case p.SnapshotsMax <= 0:
		return State{Refusal: i18n.Permanent, Reason: ReasonSnapshotsOff}
	case p.StorageType == "":
		return State{Refusal: i18n.Temporary, Reason: ReasonStorageTypeNotKnown}
	case !kind.Snapshots(p.StorageType):
		return State{Refusal: i18n.Permanent, Reason: ReasonStorageCannotSnap}
	}
	return State{Available: true}
}
