package pve

// Resource types accepted by GET /cluster/resources?type=.
const (
	ResourceVM      = "vm" // both qemu and lxc rows; each row's Type says which
	ResourceStorage = "storage"
	ResourceNode    = "node"
	ResourceSDN     = "sdn"
)

// ClusterResource is one row of GET /cluster/resources. Guest rows carry no
// swap figures (the RRD vector has none); use the node's LXC index for swap.
// Figures come from pvestatd and lag by up to 10 s.
type ClusterResource struct {
	ID     string `json:"id"`   // "lxc/5001", "qemu/100", "node/pve1", "storage/pve1/local"
	Type   string `json:"type"` // qemu, lxc, node, storage, pool, sdn, network
	Node   string `json:"node,omitempty"`
	Status string `json:"status,omitempty"`

	VMID      Int    `json:"vmid,omitempty"`
	Name      string `json:"name,omitempty"`
	Template  Bool   `json:"template,omitempty"`
	Lock      string `json:"lock,omitempty"`
	Tags      string `json:"tags,omitempty"`
	Pool      string `json:"pool,omitempty"`
	HAState   string `json:"hastate,omitempty"`
	Uptime    Int    `json:"uptime,omitempty"`
	CPU       Float  `json:"cpu,omitempty"`
	MaxCPU    Float  `json:"maxcpu,omitempty"`
	Mem       Int    `json:"mem,omitempty"`
	MaxMem    Int    `json:"maxmem,omitempty"`
	MemHost   *Int   `json:"memhost,omitempty"` // QEMU on PVE 9 only
	Disk      Int    `json:"disk,omitempty"`
	MaxDisk   Int    `json:"maxdisk,omitempty"`
	NetIn     Int    `json:"netin,omitempty"`
	NetOut    Int    `json:"netout,omitempty"`
	DiskRead  Int    `json:"diskread,omitempty"`
	DiskWrite Int    `json:"diskwrite,omitempty"`

	// Storage rows.
	Storage    string `json:"storage,omitempty"`
	PluginType string `json:"plugintype,omitempty"`
	Shared     Bool   `json:"shared,omitempty"`
	Content    string `json:"content,omitempty"`

	// Node rows.
	Level      string `json:"level,omitempty"`
	CgroupMode Int    `json:"cgroup-mode,omitempty"`
	HostArch   string `json:"host-arch,omitempty"`
}

// ClusterFirewallOptions is GET /cluster/firewall/options. Guest firewall
// rules (anti-spoofing included) are only generated when Enable is set.
type ClusterFirewallOptions struct {
	Enable        Int    `json:"enable"`
	PolicyIn      string `json:"policy_in,omitempty"`
	PolicyOut     string `json:"policy_out,omitempty"`
	PolicyForward string `json:"policy_forward,omitempty"`
	Ebtables      *Bool  `json:"ebtables,omitempty"`
	LogRatelimit  string `json:"log_ratelimit,omitempty"`
}

// Enabled reports whether the datacenter firewall is on.
func (o ClusterFirewallOptions) Enabled() bool { return o.Enable != 0 }
