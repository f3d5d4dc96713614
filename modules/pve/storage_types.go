package pve

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

// Verification is a PBS backup's verification state.
type Verification struct {
	State string `json:"state"`
	UPID  string `json:"upid,omitempty"`
}
