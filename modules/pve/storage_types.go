package pve

import "strings"

// StorageListItem is one row of GET /nodes/{node}/storage.
type StorageListItem struct {
	Storage      string `json:"storage"`
	Type         string `json:"type"`
	Content      string `json:"content"`
	Active       Bool   `json:"active,omitempty"`
	Enabled      Bool   `json:"enabled,omitempty"`
	Shared       Bool   `json:"shared,omitempty"`
	Total        Int    `json:"total,omitempty"`
	Used         Int    `json:"used,omitempty"`
	Avail        Int    `json:"avail,omitempty"`
	UsedFraction Float  `json:"used_fraction,omitempty"`
}

// ContentFilter narrows GET /nodes/{node}/storage/{storage}/content:
// Content is a content type ("backup", "images", "rootdir", "vztmpl",
// "iso"), VMID keeps the volumes of one guest. Zero values are not sent.
type ContentFilter struct {
	Content string `pve:"content"`
	VMID    int    `pve:"vmid"`
}

// StorageContent is one volume of a storage listing. Listings are sorted by
// volid, not by time. Size is bytes; CTime is an epoch (for dir-style backups
// parsed from the file name in node-local time).
type StorageContent struct {
	VolID        string        `json:"volid"`
	Content      string        `json:"content,omitempty"`
	Format       string        `json:"format,omitempty"` // "tar.zst", "vma.zst", "raw", "subvol", "tzst", "pbs-ct"
	Size         Int           `json:"size"`
	Used         *Int          `json:"used,omitempty"`
	CTime        Int           `json:"ctime,omitempty"`
	VMID         Int           `json:"vmid,omitempty"`
	Subtype      string        `json:"subtype,omitempty"` // lxc, qemu, openvz, unknown
	Notes        string        `json:"notes,omitempty"`
	Protected    Bool          `json:"protected,omitempty"`
	Parent       string        `json:"parent,omitempty"`
	Encrypted    string        `json:"encrypted,omitempty"`
	Verification *Verification `json:"verification,omitempty"`
}

// VolumeAttributes are one volume's attributes as GET …/content/{volume} answers them.
type VolumeAttributes struct {
	Path      string `json:"path,omitempty"`
	Size      Int    `json:"size"`
	Format    string `json:"format,omitempty"`
	Notes     string `json:"notes,omitempty"`
	Protected Bool   `json:"protected,omitempty"`
}

// Verification is a PBS backup's verification state.
type Verification struct {
	State string `json:"state"`
	UPID  string `json:"upid,omitempty"`
}

// VzdumpParams are the parameters of POST /nodes/{node}/vzdump for one guest
// (docs/proxmox.md §9.2). Remove is always sent: Proxmox prunes by the storage's
// policy unless it is 0 (§15).
type VzdumpParams struct {
	VMID          int    `pve:"vmid"`
	Storage       string `pve:"storage"`
	Mode          string `pve:"mode"`
	Compress      string `pve:"compress"`
	NotesTemplate string `pve:"notes-template"`
	Remove        *bool  `pve:"remove"`
	Protected     bool   `pve:"protected"`
}

// StorageConfig is one entry of GET /storage (or the answer of GET /storage/{storage}), the
// cluster's storage.cfg: what a storage is and which content types it may hold
// (comma-separated).
type StorageConfig struct {
	Storage string `json:"storage"`
	// Type is the storage plugin: dir, lvmthin, lvm, zfspool, rbd, nfs, cifs, btrfs …
	Type         string `json:"type"`
	Content      string `json:"content,omitempty"`
	Shared       Bool   `json:"shared,omitempty"`
	Disable      Bool   `json:"disable,omitempty"`
	PruneBackups string `json:"prune-backups,omitempty"`
}

// Holds reports whether the storage may hold content type ct ("backup", "images" ...).
func (s StorageConfig) Holds(ct string) bool {
	for _, x := range strings.Split(s.Content, ",") {
		if strings.TrimSpace(x) == ct {
			return true
		}
	}
	return false
}
