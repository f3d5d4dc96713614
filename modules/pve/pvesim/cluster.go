package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

func (s *Sim) hNextID(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c.has("vmid") {
		id := c.integer("vmid")
		if _, used := s.guests[id]; used {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return strconv.Itoa(id), nil
	}
	for id := s.opts.NextIDLower; id < s.opts.NextIDUpper; id++ {
		if _, used := s.guests[id]; !used {
			return strconv.Itoa(id), nil
		}
	}
	return nil, fail500("unable to get any free VMID in range [%d, %d]", s.opts.NextIDLower, s.opts.NextIDUpper-1)
}

// NextIDRange sets datacenter.cfg's next-id range (upper exclusive).
func (s *Sim) NextIDRange(lower, upper int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.NextIDLower, s.opts.NextIDUpper = lower, upper
}

func (s *Sim) hVersion(_ *reqCtx) (any, error) {
	if s.opts.PVEMajor == 8 {
		return map[string]any{"version": "8.4.1", "release": "8.4", "repoid": "2a5fa54a8503f96d"}, nil
	}
	return map[string]any{"version": "9.1.2", "release": "9.1", "repoid": "8f3c5b8f0c1a2b3d"}, nil
}

// guestResourceEntry is a /cluster/resources guest entry: no swap/maxswap, like
// pvestatd's RRD vector.
type guestResourceEntry struct {
	CPU       float64 `json:"cpu"`
	Disk      int64   `json:"disk"`
	DiskRead  int64   `json:"diskread"`
	DiskWrite int64   `json:"diskwrite"`
	HAState   string  `json:"hastate,omitempty"`
	ID        string  `json:"id"`
	Lock      string  `json:"lock,omitempty"`
	MaxCPU    int     `json:"maxcpu"`
	MaxDisk   int64   `json:"maxdisk"`
	MaxMem    int64   `json:"maxmem"`
	Mem       int64   `json:"mem"`
	MemHost   *int64  `json:"memhost,omitempty"`
	Name      string  `json:"name"`
	NetIn     int64   `json:"netin"`
	NetOut    int64   `json:"netout"`
	Node      string  `json:"node"`
	Pool      string  `json:"pool,omitempty"`
	Status    string  `json:"status"`
	Tags      string  `json:"tags,omitempty"`
	Template  int     `json:"template"`
	Type      string  `json:"type"`
	Uptime    int64   `json:"uptime"`
	VMID      int     `json:"vmid"`
}

// guestResource builds a /cluster/resources guest entry. Callers hold s.mu.
func (s *Sim) guestResource(g *guest) *guestResourceEntry {
	st := s.guestStats(g)
	e := &guestResourceEntry{
		ID: g.typ + "/" + strconv.Itoa(g.vmid), VMID: g.vmid, Node: g.node, Type: g.typ,
		Name: s.guestName(g), Template: boolInt(g.conf["template"] == "1"), Uptime: st.uptime,
		MaxCPU: st.cpus, CPU: roundTo(st.cpu, 6), MaxMem: st.maxmem, Mem: st.mem,
		MaxDisk: st.maxdisk, Disk: st.disk, NetIn: st.netin, NetOut: st.netout,
		DiskRead: st.diskread, DiskWrite: st.diskwrite, Status: "stopped",
		Lock: g.conf["lock"], Tags: g.conf["tags"], Pool: s.poolOf(g.vmid),
	}
	if g.running {
		e.Status = "running"
		if g.typ == "qemu" && g.paused {
			e.Status = "paused"
		}
	}
	if g.typ == "qemu" {
		e.Disk = 0
		if s.opts.PVEMajor >= 9 {
			e.MemHost = ptr(st.mem)
		}
	}
	if r := s.ha[haSID(g)]; r != nil {
		e.HAState = r.State
	}
	return e
}

func (s *Sim) storageResource(node string, st *storage) map[string]any {
	used := s.storageUsed(node, st)
	return map[string]any{"id": "storage/" + node + "/" + st.ID, "storage": st.ID, "node": node, "type": "storage",
		"plugintype": st.Type, "status": "available", "shared": boolInt(st.Shared), "content": strings.Join(st.Content, ","),
		"disk": used, "maxdisk": st.Total}
}

// storageUsed sums the sizes of the volumes visible on a node. Callers hold s.mu.
func (s *Sim) storageUsed(node string, st *storage) int64 {
	var used int64
	for _, v := range s.vols[st.ID] {
		if st.Shared || v.Node == "" || v.Node == node {
			used += v.Size
		}
	}
	return used
}

func (s *Sim) hClusterResources(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	typ := c.str("type")
	out := []any{}
	if typ == "" || typ == "vm" {
		out = append(out, s.guestResources()...)
	}
	if typ == "" || typ == "node" {
		out = append(out, s.nodeResources()...)
	}
	if typ == "" || typ == "storage" {
		out = append(out, s.storageResources()...)
	}
	if typ == "sdn" {
		for _, n := range s.nodeOrder {
			out = append(out, map[string]any{"id": "sdn/" + n + "/localnetwork", "sdn": "localnetwork", "node": n, "type": "sdn", "status": "ok"})
		}
	}
	return out, nil
}

// guestResources are the resource entries of every guest, by vmid.
func (s *Sim) guestResources() []any {
	ids := make([]int, 0, len(s.guests))
	for id := range s.guests {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.guestResource(s.guests[id]))
	}
	return out
}

// nodeResources are the nodes' entries: figures only for an online node.
func (s *Sim) nodeResources() []any {
	out := make([]any, 0, len(s.nodeOrder))
	for _, n := range s.nodeOrder {
		e := map[string]any{"id": "node/" + n, "node": n, "type": "node", "level": "", "cgroup-mode": 2, "status": "offline"}
		if s.nodes[n].online {
			for k, v := range s.nodeStats(n) {
				e[k] = v
			}
			e["status"] = "online"
			e["host-arch"] = "x86_64"
		}
		out = append(out, e)
	}
	return out
}

// storageResources are one entry per storage per node, as Proxmox lists a shared storage once
// per node; an offline node's are "unknown".
func (s *Sim) storageResources() []any {
	var out []any
	for _, n := range s.nodeOrder {
		for _, id := range s.stOrder {
			e := s.storageResource(n, s.storages[id])
			if !s.nodes[n].online {
				e["status"] = "unknown"
			}
			out = append(out, e)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
