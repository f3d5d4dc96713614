package plans

import "pvebill/i18n"

// The reasons the snapshot capability is refused for a plan (R44).
const (
	ReasonSnapshotsOff         = "capability.snapshots_off"
	ReasonStorageCannotSnap    = "capability.storage_cannot_snapshot"
	ReasonStorageTypeNotKnown  = "capability.storage_type_unknown"
	snapshotCapableForAllKinds = "all"
)

// snapshotStorages are the Proxmox storage types whose volumes can be snapshotted
// (docs/proxmox.md §15: volume_has_feature 'snapshot' of each storage plugin), per guest type.
// LVM-thin, ZFS (local or over iSCSI), Ceph RBD and btrfs snapshot every volume. A file storage
// (dir, NFS, CIFS, GlusterFS) snapshots only qcow2 files: a container's volume there is raw or a
// subvolume and never can, a VM's disk can when it is qcow2 (a full clone keeps its template's
// format there). Thick LVM and iSCSI LUNs cannot at all.
var snapshotStorages = map[string]string{
	"lvmthin": snapshotCapableForAllKinds, "zfspool": snapshotCapableForAllKinds, "zfs": snapshotCapableForAllKinds,
	"rbd": snapshotCapableForAllKinds, "btrfs": snapshotCapableForAllKinds,
	"dir": string(VM), "nfs": string(VM), "cifs": string(VM), "glusterfs": string(VM),
}

// StorageSnapshots reports whether a guest of type t on a storage of this Proxmox type can be
// snapshotted.
func StorageSnapshots(storageType string, t GuestType) bool {
	k := snapshotStorages[storageType]
	return k == snapshotCapableForAllKinds || k == string(t)
}

// snapshotCapability refines an available snapshot capability by the plan: off at
// snapshots_max 0, refused permanently on a storage that cannot snapshot, and temporarily while
// the storage's type is not known.
func snapshotCapability(p Plan, t GuestType) State {
	switch {
	case p.SnapshotsMax <= 0:
		return State{Refusal: i18n.Permanent, Reason: ReasonSnapshotsOff}
	case p.StorageType == "":
		return State{Refusal: i18n.Temporary, Reason: ReasonStorageTypeNotKnown}
	case !StorageSnapshots(p.StorageType, t):
		return State{Refusal: i18n.Permanent, Reason: ReasonStorageCannotSnap}
	}
	return State{Available: true}
}
