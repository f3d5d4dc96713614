package pve

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// QEMUCloneRequest is POST /nodes/{node}/qemu/{vmid}/clone (vmid is the
// source). Full nil lets Proxmox choose (linked for a template, full
// otherwise); Storage and Format are only accepted for full clones. The
// task's UPID names the source vmid, not NewID.
type QEMUCloneRequest struct {
	NewID       int    `pve:"newid"`
	Name        string `pve:"name"`
	Description string `pve:"description"`
	Pool        string `pve:"pool"`
	SnapName    string `pve:"snapname"`
	Full        *bool  `pve:"full"`
	Storage     string `pve:"storage"`
	Format      string `pve:"format"`
	Target      string `pve:"target"`
	BWLimit     *int   `pve:"bwlimit"` // KiB/s
}

// QEMUConfig is GET /nodes/{node}/qemu/{vmid}/config. Indexed keys are
// collected by index, disks by their key (scsi0, virtio1, ide2, efidisk0,
// tpmstate0); Raw keeps every key as sent.
type QEMUConfig struct {
	Digest       string `json:"digest"`
	Name         string `json:"name,omitempty"`
	Description  string `json:"description,omitempty"`
	Tags         string `json:"tags,omitempty"`
	Lock         string `json:"lock,omitempty"`
	Template     Bool   `json:"template,omitempty"`
	Protection   Bool   `json:"protection,omitempty"`
	OnBoot       Bool   `json:"onboot,omitempty"`
	OSType       string `json:"ostype,omitempty"`
	BIOS         string `json:"bios,omitempty"`
	Boot         string `json:"boot,omitempty"`
	SCSIHW       string `json:"scsihw,omitempty"`
	Machine      string `json:"machine,omitempty"`
	Agent        Text   `json:"agent,omitempty"`
	CPU          string `json:"cpu,omitempty"`
	Cores        *Int   `json:"cores,omitempty"`
	Sockets      *Int   `json:"sockets,omitempty"`
	Memory       Text   `json:"memory,omitempty"` // "2048" or "current=2048" (PVE 8.1+)
	Balloon      *Int   `json:"balloon,omitempty"`
	CIUser       string `json:"ciuser,omitempty"`
	CIPassword   string `json:"cipassword,omitempty"` // "**********" when set
	CIType       string `json:"citype,omitempty"`
	SSHKeys      string `json:"sshkeys,omitempty"` // URL-encoded, see EncodeSSHKeys
	Nameserver   string `json:"nameserver,omitempty"`
	Searchdomain string `json:"searchdomain,omitempty"`
	VMGenID      string `json:"vmgenid,omitempty"`
	SMBIOS1      string `json:"smbios1,omitempty"`

	Net      map[int]string             `json:"-"` // netN
	IPConfig map[int]string             `json:"-"` // ipconfigN
	Unused   map[int]string             `json:"-"` // unusedN
	Disks    map[string]string          `json:"-"` // ideN, sataN, scsiN, virtioN, efidisk0, tpmstate0
	Raw      map[string]json.RawMessage `json:"-"`
}

var qemuDiskPrefixes = []string{"ide", "sata", "scsi", "virtio", "efidisk", "tpmstate"}

// UnmarshalJSON decodes the known keys and collects the indexed ones.
func (c *QEMUConfig) UnmarshalJSON(b []byte) error {
	type plain QEMUConfig
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("pve: decode qemu config: %w", err)
	}
	if err := json.Unmarshal(b, &p.Raw); err != nil {
		return fmt.Errorf("pve: decode qemu config: %w", err)
	}
	p.Net = indexedKeys(p.Raw, "net")
	p.IPConfig = indexedKeys(p.Raw, "ipconfig")
	p.Unused = indexedKeys(p.Raw, "unused")
	for _, prefix := range qemuDiskPrefixes {
		for i, v := range indexedKeys(p.Raw, prefix) {
			if p.Disks == nil {
				p.Disks = map[string]string{}
			}
			p.Disks[fmt.Sprintf("%s%d", prefix, i)] = v
		}
	}
	*c = QEMUConfig(p)
	return nil
}

// QEMUConfigUpdate is PUT (synchronous) or POST (asynchronous)
// /nodes/{node}/qemu/{vmid}/config. Only set fields are sent. SSHKeys are
// plain OpenSSH keys; the client URL-encodes them the way Proxmox requires.
type QEMUConfigUpdate struct {
	Name        string `pve:"name"`
	Description string `pve:"description"`
	Tags        string `pve:"tags"`
	Memory      *int   `pve:"memory"`
	Balloon     *int   `pve:"balloon"`
	Cores       *int   `pve:"cores"`
	Sockets     *int   `pve:"sockets"`
	CPU         string `pve:"cpu"`
	OnBoot      *bool  `pve:"onboot"`
	Protection  *bool  `pve:"protection"`
	Agent       string `pve:"agent"`
	Boot        string `pve:"boot"`

	// Cloud-init (needs a cloud-init drive such as ide2=local-lvm:cloudinit).
	CIUser       string         `pve:"ciuser"`
	CIPassword   Secret         `pve:"cipassword"`
	CIType       string         `pve:"citype"`
	SSHKeys      []string       `pve:"-"`
	IPConfig     map[int]string `pve:"ipconfig,indexed"`
	Nameserver   string         `pve:"nameserver"`
	Searchdomain string         `pve:"searchdomain"`

	Net   map[int]string    `pve:"net,indexed"`
	Disks map[string]string `pve:"-"` // scsi1="local-lvm:32", ide2="local-lvm:cloudinit"

	Delete []string `pve:"delete,list"`
	Revert []string `pve:"revert,list"`
	Digest string   `pve:"digest"`
}

// form encodes the update, including the fields the generic encoder skips.
func (u QEMUConfigUpdate) form() (url.Values, error) {
	v, err := encodeForm(u)
	if err != nil {
		return nil, err
	}
	if len(u.SSHKeys) > 0 {
		v.Set("sshkeys", EncodeSSHKeys(u.SSHKeys))
	}
	keys := make([]string, 0, len(u.Disks))
	for k := range u.Disks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isQEMUDiskKey(k) {
			return nil, fmt.Errorf("pve: %q is not a QEMU disk key", k)
		}
		v.Set(k, u.Disks[k])
	}
	return v, nil
}

func isQEMUDiskKey(k string) bool {
	for _, p := range qemuDiskPrefixes {
		if _, ok := keyIndex(k, p); ok {
			return true
		}
	}
	return false
}

// EncodeSSHKeys encodes OpenSSH public keys for QEMU's sshkeys option: the
// keys joined by newlines and percent-encoded with spaces as %20, never "+"
// (Proxmox URL-decodes the value and checks it against
// ^[-%a-zA-Z0-9_.!~*'()]*$). The form encoding then sends "%" as "%25".
func EncodeSSHKeys(keys []string) string {
	trimmed := make([]string, 0, len(keys))
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			trimmed = append(trimmed, k)
		}
	}
	return strings.ReplaceAll(url.QueryEscape(strings.Join(trimmed, "\n")), "+", "%20")
}

// QEMUStatus is GET /nodes/{node}/qemu/{vmid}/status/current. A paused VM has
// Status "running" and QMPStatus "paused".
type QEMUStatus struct {
	VMID           Int       `json:"vmid"`
	Name           string    `json:"name,omitempty"`
	Status         string    `json:"status"`
	QMPStatus      string    `json:"qmpstatus,omitempty"`
	Lock           string    `json:"lock,omitempty"`
	Tags           string    `json:"tags,omitempty"`
	Template       Bool      `json:"template,omitempty"`
	Agent          Bool      `json:"agent,omitempty"`
	PID            Int       `json:"pid,omitempty"`
	Uptime         Int       `json:"uptime,omitempty"`
	CPU            Float     `json:"cpu,omitempty"`
	CPUs           Float     `json:"cpus,omitempty"`
	Mem            Int       `json:"mem,omitempty"`
	MaxMem         Int       `json:"maxmem,omitempty"`
	MemHost        *Int      `json:"memhost,omitempty"`
	MaxDisk        Int       `json:"maxdisk,omitempty"`
	NetIn          Int       `json:"netin,omitempty"`
	NetOut         Int       `json:"netout,omitempty"`
	DiskRead       Int       `json:"diskread,omitempty"`
	DiskWrite      Int       `json:"diskwrite,omitempty"`
	RunningMachine string    `json:"running-machine,omitempty"`
	RunningQEMU    string    `json:"running-qemu,omitempty"`
	HA             *HAStatus `json:"ha,omitempty"`
	Pressure
}

// Running reports whether the VM process runs (paused included).
func (s QEMUStatus) Running() bool { return s.Status == "running" }

// Paused reports whether a running VM is paused.
func (s QEMUStatus) Paused() bool { return s.Status == "running" && s.QMPStatus == "paused" }

// QEMUDeleteOptions are the parameters of DELETE /nodes/{node}/qemu/{vmid}
// (no force: the VM must be stopped).
type QEMUDeleteOptions struct {
	Purge                    bool `pve:"purge"`
	DestroyUnreferencedDisks bool `pve:"destroy-unreferenced-disks"`
}

// QEMURestoreRequest is POST /nodes/{node}/qemu with archive=: qmrestore's API (the vmid
// comes from the client). Drives may not be passed with an archive; every other option
// passed overrides the archive's (docs/proxmox.md §9.3). Pointer fields are sent whenever
// non-nil.
type QEMURestoreRequest struct {
	Archive     string `pve:"archive"`
	Force       bool   `pve:"force"`
	Storage     string `pve:"storage"`
	Unique      bool   `pve:"unique"`
	Cores       *int   `pve:"cores"`
	Sockets     *int   `pve:"sockets"`
	Memory      *int   `pve:"memory"` // MiB
	Balloon     *int   `pve:"balloon"`
	Description string `pve:"description"`
	Tags        string `pve:"tags"`
	OnBoot      *bool  `pve:"onboot"`
}

// AgentPasswordRequest is the form of POST /nodes/{node}/qemu/{vmid}/agent/set-user-password:
// the user and its new password (5 to 1024 characters, docs/proxmox.md §8.6), sent in clear
// (crypted is never set).
type AgentPasswordRequest struct {
	Username string `pve:"username"`
	Password Secret `pve:"password"`
}
