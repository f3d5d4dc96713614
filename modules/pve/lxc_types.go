package pve

import (
	"encoding/json"
	"fmt"
)

// LXCCreateRequest is POST /nodes/{node}/lxc (the vmid comes from the
// client). Only set fields are sent: pointer fields whenever non-nil, so
// Swap: Ptr(0) sends swap=0 (omitted, Proxmox writes 512) and
// Unprivileged: Ptr(false) sends unprivileged=0 (the default differs between
// PVE 8 and 9; always send it).
type LXCCreateRequest struct {
	OSTemplate    string `pve:"ostemplate"`
	Hostname      string `pve:"hostname"`
	Password      Secret `pve:"password"`
	SSHPublicKeys string `pve:"ssh-public-keys"` // plain text, one key per line (not URL-encoded)
	Unprivileged  *bool  `pve:"unprivileged"`

	Cores    *int     `pve:"cores"`
	CPULimit *float64 `pve:"cpulimit"`
	CPUUnits *int     `pve:"cpuunits"`
	Memory   *int     `pve:"memory"` // MiB
	Swap     *int     `pve:"swap"`   // MiB

	// RootFS and MountPoints in the allocation form STORAGE:GiB, e.g.
	// "local-lvm:8" or "local-lvm:20,mp=/data,backup=1".
	RootFS      string         `pve:"rootfs"`
	MountPoints map[int]string `pve:"mp,indexed"`
	Storage     string         `pve:"storage"`
	Net         map[int]string `pve:"net,indexed"`

	Nameserver   string `pve:"nameserver"`
	Searchdomain string `pve:"searchdomain"`
	Features     string `pve:"features"`
	Arch         string `pve:"arch"`
	OSType       string `pve:"ostype"`
	Timezone     string `pve:"timezone"`

	Pool        string `pve:"pool"`
	Description string `pve:"description"`
	Tags        string `pve:"tags"`
	OnBoot      *bool  `pve:"onboot"`
	Startup     string `pve:"startup"`
	Protection  *bool  `pve:"protection"`
	Start       bool   `pve:"start"`

	// Restore from a backup volume given as OSTemplate.
	Restore            bool     `pve:"restore"`
	Force              bool     `pve:"force"`
	Unique             bool     `pve:"unique"`
	BWLimit            *float64 `pve:"bwlimit"` // KiB/s
	IgnoreUnpackErrors bool     `pve:"ignore-unpack-errors"`
}

// LXCConfig is GET /nodes/{node}/lxc/{vmid}/config. Keys the config may lack
// are pointers where absence means something different from zero (no cores
// key: all host cores; no swap key: 0 at runtime). Indexed keys are
// collected by index; Raw keeps every key as sent.
type LXCConfig struct {
	Digest       string `json:"digest"`
	Hostname     string `json:"hostname,omitempty"`
	Description  string `json:"description,omitempty"`
	Tags         string `json:"tags,omitempty"`
	Lock         string `json:"lock,omitempty"`
	Arch         string `json:"arch,omitempty"`
	OSType       string `json:"ostype,omitempty"`
	Unprivileged Bool   `json:"unprivileged,omitempty"`
	Template     Bool   `json:"template,omitempty"`
	Protection   Bool   `json:"protection,omitempty"`
	OnBoot       Bool   `json:"onboot,omitempty"`
	Startup      string `json:"startup,omitempty"`
	Features     string `json:"features,omitempty"`
	Nameserver   string `json:"nameserver,omitempty"`
	Searchdomain string `json:"searchdomain,omitempty"`
	Timezone     string `json:"timezone,omitempty"`
	Cores        *Int   `json:"cores,omitempty"`
	CPULimit     *Float `json:"cpulimit,omitempty"`
	CPUUnits     *Int   `json:"cpuunits,omitempty"`
	Memory       *Int   `json:"memory,omitempty"`
	Swap         *Int   `json:"swap,omitempty"`
	RootFS       string `json:"rootfs,omitempty"`
	// LXC holds raw lxc.* entries as [key, value] pairs.
	LXC [][2]string `json:"lxc,omitempty"`

	Net         map[int]string             `json:"-"` // netN
	MountPoints map[int]string             `json:"-"` // mpN
	Unused      map[int]string             `json:"-"` // unusedN
	Devices     map[int]string             `json:"-"` // devN
	Raw         map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known keys and collects the indexed ones.
func (c *LXCConfig) UnmarshalJSON(b []byte) error {
	type plain LXCConfig
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("pve: decode lxc config: %w", err)
	}
	if err := json.Unmarshal(b, &p.Raw); err != nil {
		return fmt.Errorf("pve: decode lxc config: %w", err)
	}
	p.Net = indexedKeys(p.Raw, "net")
	p.MountPoints = indexedKeys(p.Raw, "mp")
	p.Unused = indexedKeys(p.Raw, "unused")
	p.Devices = indexedKeys(p.Raw, "dev")
	*c = LXCConfig(p)
	return nil
}

// LXCConfigUpdate is PUT /nodes/{node}/lxc/{vmid}/config. Only set fields are
// sent. Delete lists keys to remove (deleting an unusedN destroys its volume;
// deleting swap makes it 0, not 512). Digest refuses the change if the config
// was modified since it was read ([ErrConflict]).
type LXCConfigUpdate struct {
	Hostname     string         `pve:"hostname"`
	Description  string         `pve:"description"`
	Tags         string         `pve:"tags"`
	Cores        *int           `pve:"cores"`
	CPULimit     *float64       `pve:"cpulimit"`
	CPUUnits     *int           `pve:"cpuunits"`
	Memory       *int           `pve:"memory"`
	Swap         *int           `pve:"swap"`
	OnBoot       *bool          `pve:"onboot"`
	Protection   *bool          `pve:"protection"`
	Startup      string         `pve:"startup"`
	Features     string         `pve:"features"`
	Nameserver   string         `pve:"nameserver"`
	Searchdomain string         `pve:"searchdomain"`
	Timezone     string         `pve:"timezone"`
	Net          map[int]string `pve:"net,indexed"`
	MountPoints  map[int]string `pve:"mp,indexed"`

	Delete []string `pve:"delete,list"`
	Revert []string `pve:"revert,list"`
	Digest string   `pve:"digest"`
}

// PendingItem is one row of GET /nodes/{node}/lxc/{vmid}/pending: the active
// Value, the Pending one, and Delete (1 or 2) for a pending removal.
type PendingItem struct {
	Key     string `json:"key"`
	Value   Text   `json:"value,omitempty"`
	Pending Text   `json:"pending,omitempty"`
	Delete  Int    `json:"delete,omitempty"`
}

// LXCStatus is GET /nodes/{node}/lxc/{vmid}/status/current and one row of the
// node index GET /nodes/{node}/lxc (which lacks HA). Swap and MaxSwap are
// bytes and nil when not reported; MaxSwap is 0 when the config has no swap.
type LXCStatus struct {
	VMID      Int       `json:"vmid"` // a string before PVE 8.2 in the index
	Type      string    `json:"type,omitempty"`
	Name      string    `json:"name,omitempty"`
	Status    string    `json:"status"` // running, stopped
	Lock      string    `json:"lock,omitempty"`
	Tags      string    `json:"tags,omitempty"`
	Template  Bool      `json:"template,omitempty"`
	PID       Int       `json:"pid,omitempty"`
	Uptime    Int       `json:"uptime,omitempty"`
	CPU       Float     `json:"cpu,omitempty"`
	CPUs      Float     `json:"cpus,omitempty"`
	Mem       Int       `json:"mem,omitempty"`
	MaxMem    Int       `json:"maxmem,omitempty"`
	Swap      *Int      `json:"swap,omitempty"`
	MaxSwap   *Int      `json:"maxswap,omitempty"`
	Disk      Int       `json:"disk,omitempty"`
	MaxDisk   Int       `json:"maxdisk,omitempty"`
	NetIn     Int       `json:"netin,omitempty"`
	NetOut    Int       `json:"netout,omitempty"`
	DiskRead  Int       `json:"diskread,omitempty"`
	DiskWrite Int       `json:"diskwrite,omitempty"`
	HA        *HAStatus `json:"ha,omitempty"`
	Pressure
}

// Running reports whether the container runs.
func (s LXCStatus) Running() bool { return s.Status == "running" }

// LXCDeleteOptions are the parameters of DELETE /nodes/{node}/lxc/{vmid}.
// DestroyUnreferencedDisks frees every volume named for the vmid on every
// rootdir storage, referenced or not: terminate sends it, a reinstall's
// destroy must not.
type LXCDeleteOptions struct {
	Purge                    bool `pve:"purge"`
	DestroyUnreferencedDisks bool `pve:"destroy-unreferenced-disks"`
	Force                    bool `pve:"force"`
}

// LXCInterface is one row of GET /nodes/{node}/lxc/{vmid}/interfaces.
type LXCInterface struct {
	Name            string         `json:"name"`
	HWAddr          string         `json:"hwaddr,omitempty"`
	HardwareAddress string         `json:"hardware-address,omitempty"`
	Inet            string         `json:"inet,omitempty"`
	Inet6           string         `json:"inet6,omitempty"`
	IPAddresses     []LXCIPAddress `json:"ip-addresses,omitempty"`
}

// LXCIPAddress is one address of an interface.
type LXCIPAddress struct {
	Address string `json:"ip-address"`
	Type    string `json:"ip-address-type"`
	Prefix  Int    `json:"prefix"`
}
