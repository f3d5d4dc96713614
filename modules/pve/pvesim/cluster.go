package pvesim

import (
	"crypto/sha256"
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

func (s *Sim) nodeHash(node string) uint64 {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d/%s", s.opts.Seed, node)))
	var x uint64
	for i := 0; i < 8; i++ {
		x = x<<8 | uint64(h[i])
	}
	return x
}

func (s *Sim) nodeFingerprint(node string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("pvesim-cert/%d/%s", s.opts.Seed, node)))
	parts := make([]string, len(h))
	for i, b := range h {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// nodeEntry builds the common node statistics. Callers hold s.mu.
func (s *Sim) nodeStats(node string) map[string]any {
	h := s.nodeHash(node)
	maxmem := int64(64+int(h%4)*64) * gib
	maxcpu := 16 + int(h%3)*16
	var used int64
	var cpuLoad float64
	for _, g := range s.byNode[node] {
		if g.running {
			st := s.guestStats(g)
			used += st.mem
			cpuLoad += st.cpu * float64(st.cpus)
		}
	}
	used += 2 * gib
	cpu := cpuLoad / float64(maxcpu)
	if cpu > 1 {
		cpu = 1
	}
	uptime := 864000 + int64(h%100000) + (s.now().Unix() - s.opts.Now().Unix())
	return map[string]any{"mem": used, "maxmem": maxmem, "cpu": roundTo(cpu+0.01, 6), "maxcpu": maxcpu,
		"uptime": uptime, "disk": int64(12) * gib, "maxdisk": int64(100) * gib}
}

func (s *Sim) hNodes(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []map[string]any{}
	for _, n := range s.nodeOrder {
		ns := s.nodes[n]
		e := map[string]any{"node": n, "id": "node/" + n, "type": "node", "level": "", "ssl_fingerprint": s.nodeFingerprint(n)}
		if ns.online {
			for k, v := range s.nodeStats(n) {
				e[k] = v
			}
			e["status"] = "online"
		} else {
			e["status"] = "offline"
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Sim) hNodeStatus(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.nodeStats(c.node)
	maxmem := st["maxmem"].(int64)
	used := st["mem"].(int64)
	pveVer := "pve-manager/9.1.2/8f3c5b8f0c1a2b3d"
	kver := "6.14.8-2-pve"
	if s.opts.PVEMajor == 8 {
		pveVer = "pve-manager/8.4.1/2a5fa54a8503f96d"
		kver = "6.8.12-9-pve"
	}
	return map[string]any{
		"uptime": st["uptime"], "cpu": st["cpu"], "wait": 0.001,
		"loadavg":        []string{"0.42", "0.38", "0.31"},
		"memory":         map[string]any{"total": maxmem, "used": used, "free": maxmem - used, "available": maxmem - used},
		"swap":           map[string]any{"total": int64(8) * gib, "used": 0, "free": int64(8) * gib},
		"rootfs":         map[string]any{"total": int64(100) * gib, "used": int64(12) * gib, "free": int64(88) * gib, "avail": int64(83) * gib},
		"cpuinfo":        map[string]any{"cpus": st["maxcpu"], "cores": st["maxcpu"].(int) / 2, "sockets": 1, "model": "Simulated CPU", "mhz": "2400.000", "hvm": "1", "flags": "", "user_hz": 100},
		"pveversion":     pveVer,
		"kversion":       "Linux " + kver + " #1 SMP PREEMPT_DYNAMIC PMX",
		"current-kernel": map[string]any{"sysname": "Linux", "release": kver, "version": "#1 SMP PREEMPT_DYNAMIC PMX", "machine": "x86_64"},
		"boot-info":      map[string]any{"mode": "efi", "secureboot": 0},
		"ksm":            map[string]any{"shared": 0},
	}, nil
}

func (s *Sim) hVersion(c *reqCtx) (any, error) {
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
		ids := make([]int, 0, len(s.guests))
		for id := range s.guests {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			out = append(out, s.guestResource(s.guests[id]))
		}
	}
	if typ == "" || typ == "node" {
		for _, n := range s.nodeOrder {
			ns := s.nodes[n]
			e := map[string]any{"id": "node/" + n, "node": n, "type": "node", "level": "", "cgroup-mode": 2, "status": "offline"}
			if ns.online {
				for k, v := range s.nodeStats(n) {
					e[k] = v
				}
				e["status"] = "online"
				e["host-arch"] = "x86_64"
			}
			out = append(out, e)
		}
	}
	if typ == "" || typ == "storage" {
		for _, n := range s.nodeOrder {
			for _, id := range s.stOrder {
				e := s.storageResource(n, s.storages[id])
				if !s.nodes[n].online {
					e["status"] = "unknown"
				}
				out = append(out, e)
			}
		}
	}
	if typ == "sdn" {
		for _, n := range s.nodeOrder {
			out = append(out, map[string]any{"id": "sdn/" + n + "/localnetwork", "sdn": "localnetwork", "node": n, "type": "sdn", "status": "ok"})
		}
	}
	return out, nil
}

func (s *Sim) hClusterFirewallOptionsGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]any{}
	for k, v := range s.clusterFW {
		out[k] = typedFirewallValue(k, v)
	}
	return out, nil
}

func (s *Sim) hClusterFirewallOptionsPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := c.str("digest"); d != "" && d != mapDigest(s.clusterFW) {
		return nil, fail500("detected modified configuration - file changed by other user? Try again.")
	}
	applyOptionChanges(s.clusterFW, c, []string{"delete", "digest"})
	return nil, nil
}

// SetClusterFirewall enables or disables the datacenter firewall.
func (s *Sim) SetClusterFirewall(enable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusterFW["enable"] = strconv.Itoa(boolInt(enable))
}

func (s *Sim) hHAResources(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []map[string]any{}
	for _, sid := range sortedKeys(s.ha) {
		r := s.ha[sid]
		typ := "ct"
		if strings.HasPrefix(sid, "vm:") {
			typ = "vm"
		}
		out = append(out, map[string]any{"sid": sid, "state": r.State, "type": typ, "digest": mapDigest(map[string]string{sid: r.State})})
	}
	return out, nil
}

func normalizeSID(sid string) string {
	if _, err := strconv.Atoi(sid); err == nil {
		return "vm:" + sid
	}
	return sid
}

func (s *Sim) hHAResourceCreate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	typ, idStr, _ := strings.Cut(sid, ":")
	id, _ := strconv.Atoi(idStr)
	g := s.guests[id]
	if g == nil {
		return nil, fail500("unable to find %s %d", map[string]string{"ct": "CT", "vm": "VM"}[typ], id)
	}
	sid = haSID(g)
	if _, ok := s.ha[sid]; ok {
		return nil, fail500("resource ID '%s' already defined", sid)
	}
	state := c.str("state")
	if state == "" {
		state = "started"
	}
	s.ha[sid] = &haResource{SID: sid, State: state}
	return nil, nil
}

func (s *Sim) hHAResourceUpdate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	r := s.ha[sid]
	if r == nil {
		return nil, fail500("no such resource '%s'", sid)
	}
	if c.has("state") {
		r.State = c.str("state")
	}
	return nil, nil
}

func (s *Sim) hHAResourceDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	if _, ok := s.ha[sid]; !ok {
		return nil, fail500("no such resource '%s'", sid)
	}
	delete(s.ha, sid)
	return nil, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
