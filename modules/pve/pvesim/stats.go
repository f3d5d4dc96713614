package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
)

// guestStatValues are the moving run-time figures of a guest.
type guestStatValues struct {
	uptime                int64
	cpu                   float64
	cpus                  int
	mem, maxmem           int64
	swap, maxswap         int64
	disk, maxdisk         int64
	netin, netout         int64
	diskread, diskwrite   int64
	pressureCPU, pressure float64
}

// mix is splitmix64, used to derive deterministic pseudo-random figures.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit returns a deterministic value in [0,1) for (seed, vmid, salt, bucket).
func (s *Sim) unit(vmid int, salt uint64, bucket int64) float64 {
	h := mix(uint64(s.opts.Seed) ^ mix(uint64(vmid)*0x100000001b3^salt) ^ mix(uint64(bucket)+salt*7919))
	return float64(h>>11) / float64(1<<53)
}

func roundTo(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

func confInt(conf map[string]string, k string, def int64) int64 {
	v, ok := conf[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return def
	}
	return int64(n)
}

// rootSize is the configured size of a guest's root disk in bytes (0 if unknown).
func rootSize(g *guest) int64 {
	if g.typ == "lxc" {
		ms := parseMount(g.conf["rootfs"])
		n, _ := parseSize(ms.opts["size"])
		return n
	}
	var total int64
	for k, v := range g.conf {
		if !qemuDiskKey(k) {
			continue
		}
		ms := parseMount(v)
		if ms.opts["media"] == "cdrom" {
			continue
		}
		n, _ := parseSize(ms.opts["size"])
		if n > total {
			total = n
		}
	}
	return total
}

// guestStats computes a guest's figures: a pure function of the seed, the vmid, the
// config and the simulator clock (10-second sample buckets). Callers hold s.mu.
func (s *Sim) guestStats(g *guest) guestStatValues {
	var v guestStatValues
	memMiB := confInt(g.conf, "memory", 512)
	if g.typ == "qemu" && memMiB == 512 && g.conf["memory"] == "" {
		memMiB = 512
	}
	v.maxmem = memMiB * mib
	if g.typ == "lxc" {
		v.maxswap = confInt(g.conf, "swap", 0) * mib
	}
	v.cpus = s.guestCPUs(g)
	size := rootSize(g)
	if size == 0 {
		size = 4 * gib
	}
	v.maxdisk = size
	if !g.running {
		return v
	}
	now := s.now()
	up := int64(now.Sub(g.startedAt).Seconds())
	if up < 0 {
		up = 0
	}
	v.uptime = up
	bucket := now.Unix() / 10
	v.cpu = roundTo(0.01+0.3*s.unit(g.vmid, 1, bucket), 6)
	if g.paused {
		v.cpu = 0
	}
	v.mem = int64(float64(v.maxmem) * (0.15 + 0.6*s.unit(g.vmid, 2, bucket)))
	if v.maxswap > 0 {
		// a third of the containers swap; the rest stay at zero
		if s.unit(g.vmid, 3, 0) < 0.34 {
			v.swap = int64(float64(v.maxswap) * 0.9 * s.unit(g.vmid, 4, bucket))
		}
	}
	rateIn := 1000 + int64(50000*s.unit(g.vmid, 5, 0))
	rateOut := 500 + int64(20000*s.unit(g.vmid, 6, 0))
	v.netin = up * rateIn
	v.netout = up * rateOut
	v.diskread = up*2000 + int64(1e8*s.unit(g.vmid, 7, 0))
	v.diskwrite = up*3000 + int64(5e7*s.unit(g.vmid, 8, 0))
	if g.typ == "lxc" {
		// statvfs of the running rootfs is a bit smaller than the volume
		v.maxdisk = size - size/50
		v.disk = int64(float64(v.maxdisk) * (0.1 + 0.3*s.unit(g.vmid, 9, 0)))
	} else {
		v.disk = 0
	}
	v.pressureCPU = roundTo(2*s.unit(g.vmid, 10, bucket), 2)
	v.pressure = roundTo(s.unit(g.vmid, 11, bucket), 2)
	return v
}

func (s *Sim) nodeCPUs(node string) int {
	return 16 + int(s.nodeHash(node)%3)*16
}

func (s *Sim) guestName(g *guest) string {
	if g.typ == "lxc" {
		if h := g.conf["hostname"]; h != "" {
			return h
		}
		return "CT" + strconv.Itoa(g.vmid)
	}
	if n := g.conf["name"]; n != "" {
		return n
	}
	return "VM " + strconv.Itoa(g.vmid)
}

// configText renders a guest config the way the .conf file looks (description as
// comments, keys sorted, raw lxc keys, pending section); the digest is its SHA-1.
func configText(g *guest) string {
	var b strings.Builder
	if d, ok := g.conf["description"]; ok {
		for _, line := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			b.WriteString("#" + line + "\n")
		}
	}
	for _, k := range sortedKeys(g.conf) {
		if k == "description" {
			continue
		}
		b.WriteString(k + ": " + g.conf[k] + "\n")
	}
	for _, kv := range g.lxcRaw {
		b.WriteString(kv[0] + ": " + kv[1] + "\n")
	}
	if len(g.pending) > 0 || len(g.pendingDelete) > 0 {
		b.WriteString("\n[pve:pending]\n")
		for _, k := range sortedKeys(g.pending) {
			b.WriteString(k + ": " + g.pending[k] + "\n")
		}
		if len(g.pendingDelete) > 0 {
			b.WriteString("delete: " + strings.Join(sortedKeys(g.pendingDelete), ",") + "\n")
		}
	}
	b.WriteString(snapshotSections(g))
	return b.String()
}

func configDigest(g *guest) string {
	sum := sha1.Sum([]byte(configText(g)))
	return hex.EncodeToString(sum[:])
}

func mapDigest(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(k + ": " + m[k] + "\n")
	}
	sum := sha1.Sum([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// typedValue converts a config value to the JSON type Proxmox answers with: integers,
// numbers and booleans of the schema become JSON numbers.
func (s *Sim) typedValue(typ, key, val string) any {
	sm := s.configSchema(typ)
	if sm == nil {
		return val
	}
	p := sm.paramFor(key)
	if key == "template" {
		if n, err := strconv.Atoi(val); err == nil {
			return n
		}
	}
	if p == nil {
		return val
	}
	switch p.typ {
	case "integer", "boolean":
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			return n
		}
	case "number":
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			return f
		}
	}
	return val
}

// configSchema is the PUT .../config parameter schema of a guest type: it says which
// keys exist and their JSON types.
func (s *Sim) configSchema(typ string) *schemaMethod {
	if typ == "lxc" {
		return s.lxcConf
	}
	return s.qemuConf
}

func lookupConfigSchema(sc *apiSchema, typ string) *schemaMethod {
	n := sc.lookup("/nodes/x/"+typ+"/100/config", map[string]string{})
	if n == nil {
		return nil
	}
	return n.methods["PUT"]
}

// guestCPUs is a guest's CPU count: cores (times sockets for a VM), else a container's
// cpulimit, else the node's CPUs.
func (s *Sim) guestCPUs(g *guest) int {
	cores := confInt(g.conf, "cores", 0)
	if g.typ == "qemu" {
		if cores == 0 {
			cores = 1
		}
		cores *= confInt(g.conf, "sockets", 1)
	}
	if cores != 0 {
		return int(cores)
	}
	if cl := confInt(g.conf, "cpulimit", 0); cl > 0 {
		return int(cl)
	}
	return s.nodeCPUs(g.node)
}
