package pvesim

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Nodes: their behaviour switches, their requests in flight, and GET /nodes and
// /nodes/{node}/status.

// clusterNodes is the cluster's nodes, in their configured order. It is guarded by Sim.mu.
type clusterNodes struct {
	nodeOrder []string
	nodes     map[string]*nodeState
}

func (cn *clusterNodes) resetNodes(names []string) {
	cn.nodeOrder = append([]string(nil), names...)
	cn.nodes = map[string]*nodeState{}
	for _, n := range names {
		cn.nodes[n] = &nodeState{name: n, online: true}
	}
}

// NodeOptions are per-node behaviour switches.
type NodeOptions struct {
	OldIndex      bool          `json:"old_index"`        // /nodes/{node}/lxc gives vmid as a string (before PVE 8.2)
	NoSwapInIndex bool          `json:"no_swap_in_index"` // /nodes/{node}/lxc lacks swap/maxswap
	MaxConcurrent int           `json:"max_concurrent"`   // requests beyond this wait (0 = unlimited)
	Latency       time.Duration `json:"latency"`          // added to every request for the node
	MemoryBytes   int64         `json:"memory_bytes"`     // the node's memory (0: a figure derived from its name)
}

type nodeState struct {
	name   string
	online bool
	opts   NodeOptions
	sem    chan struct{}

	flightMu    sync.Mutex
	inflight    int
	maxInflight int
}

// SetNodeOnline takes a node off-line (its proxied calls fail with 595) or back on.
func (s *Sim) SetNodeOnline(node string, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[node]; n != nil {
		n.online = up
	}
}

// SetNodeOptions sets a node's behaviour switches.
func (s *Sim) SetNodeOptions(node string, o NodeOptions) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[node]
	if n == nil {
		return
	}
	n.opts = o
	if o.MaxConcurrent > 0 {
		n.sem = make(chan struct{}, o.MaxConcurrent)
	} else {
		n.sem = nil
	}
}

// MaxInFlight is the highest number of simultaneous requests observed for a node.
func (s *Sim) MaxInFlight(node string) int {
	s.mu.RLock()
	n := s.nodes[node]
	s.mu.RUnlock()
	if n == nil {
		return 0
	}
	n.flightMu.Lock()
	defer n.flightMu.Unlock()
	return n.maxInflight
}

// enter counts a request in flight for the node.
func (n *nodeState) enter() {
	n.flightMu.Lock()
	n.inflight++
	if n.inflight > n.maxInflight {
		n.maxInflight = n.inflight
	}
	n.flightMu.Unlock()
}

// leave counts a request of the node done.
func (n *nodeState) leave() {
	n.flightMu.Lock()
	n.inflight--
	n.flightMu.Unlock()
}

func (s *Sim) hNodes(_ *reqCtx) (any, error) {
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
	if m := s.nodes[node].opts.MemoryBytes; m > 0 {
		maxmem = m
	}
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
