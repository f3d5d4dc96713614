package pve

// NodeListItem is one row of GET /nodes.
type NodeListItem struct {
	Node           string `json:"node"`
	Status         string `json:"status"` // online, offline, unknown
	CPU            Float  `json:"cpu,omitempty"`
	MaxCPU         Int    `json:"maxcpu,omitempty"`
	Mem            Int    `json:"mem,omitempty"`
	MaxMem         Int    `json:"maxmem,omitempty"`
	Uptime         Int    `json:"uptime,omitempty"`
	Level          string `json:"level,omitempty"`
	SSLFingerprint string `json:"ssl_fingerprint,omitempty"`
}

// NodeStatus is GET /nodes/{node}/status (the fields pvebill reads).
type NodeStatus struct {
	CPU        Float       `json:"cpu"`
	LoadAvg    []Float     `json:"loadavg"`
	Uptime     Int         `json:"uptime"`
	PVEVersion string      `json:"pveversion"`
	KVersion   string      `json:"kversion,omitempty"`
	Memory     NodeUsage   `json:"memory"`
	Swap       NodeUsage   `json:"swap"`
	RootFS     NodeUsage   `json:"rootfs"`
	CPUInfo    NodeCPUInfo `json:"cpuinfo"`
}

// NodeUsage is a total/used/free triple in bytes.
type NodeUsage struct {
	Total Int `json:"total"`
	Used  Int `json:"used"`
	Free  Int `json:"free"`
	Avail Int `json:"avail,omitempty"`
}

// NodeCPUInfo describes the node's processors.
type NodeCPUInfo struct {
	CPUs    Int    `json:"cpus"`
	Cores   Int    `json:"cores"`
	Sockets Int    `json:"sockets"`
	Model   string `json:"model"`
}
