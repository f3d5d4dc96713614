package qemu

// BackupSubtype is the VM's word in vzdump archives: vzdump-qemu-<vmid>-… (R42,
// docs/proxmox.md §9.1). Having it makes VMs offer backups.
func (m *Module) BackupSubtype() string { return "qemu" }
