package lxc

// BackupSubtype is the container's word in vzdump archives: vzdump-lxc-<vmid>-… (R42,
// docs/proxmox.md §9.1). Having it makes containers offer backups.
func (m *Module) BackupSubtype() string { return "lxc" }
