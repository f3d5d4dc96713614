package pve

// Snapshot is one entry of GET /nodes/{node}/{lxc|qemu}/{vmid}/snapshot. The list also holds
// the pseudo-entry "current" (docs/proxmox.md §15), which [SnapshotClient.List] leaves out.
type Snapshot struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// SnapTime is the creation time (epoch seconds); absent on "current".
	SnapTime Int `json:"snaptime,omitempty"`
	// Parent is the snapshot this one descends from; empty for the first.
	Parent string `json:"parent,omitempty"`
	// VMState says a VM snapshot holds its RAM (never for a container).
	VMState Bool `json:"vmstate,omitempty"`
}

// CurrentSnapshot is the name of the list's pseudo-entry for the guest as it is now.
const CurrentSnapshot = "current"

// SnapshotCreateRequest is the body of POST …/snapshot. The name must be a pve-configid of at
// most 40 characters and not "current" or "pending" (checked by pveconf.ValidSnapshotName).
type SnapshotCreateRequest struct {
	SnapName    string `pve:"snapname"`
	Description string `pve:"description"`
}

// SnapshotRollbackRequest is the body of POST …/snapshot/{snapname}/rollback: Start starts the
// guest once rolled back (Proxmox stops it first).
type SnapshotRollbackRequest struct {
	Start bool `pve:"start"`
}
