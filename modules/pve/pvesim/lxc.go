package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Container endpoints, after pve-container's API2/LXC.pm, API2/LXC/Config.pm and
// API2/LXC/Status.pm.

// createOnlyParams are create parameters that are not config keys.
var createOnlyParams = map[string]bool{
	"node": true, "vmid": true, "ostemplate": true, "password": true, "ssh-public-keys": true,
	"storage": true, "restore": true, "force": true, "unique": true, "start": true,
	"ignore-unpack-errors": true, "bwlimit": true, "ha-managed": true, "pool": true,
}

var reBareSize = regexp.MustCompile(`^\d+(\.\d+)?$`)

// lxcFastplug are the keys a running container takes at once ($LXC_FASTPLUG_OPTIONS).
func lxcFastplug(k string) bool {
	switch k {
	case "description", "onboot", "startup", "protection", "hostname", "hookscript", "cores", "tags", "lock":
		return true
	}
	return false
}

// lxcHotplug reports whether a running container applies a change of k live
// (vmconfig_hotplug_pending); exists says whether the key is already set.
func lxcHotplug(k string, exists bool) bool {
	switch {
	case lxcFastplug(k), k == "cpulimit", k == "cpuunits", k == "memory", k == "swap", indexedKey(k, "net"):
		return true
	case indexedKey(k, "mp"), indexedKey(k, "dev"):
		return !exists // never hotplugged over an existing one
	}
	return false
}

// lxcHotDelete reports whether a running container drops k at once.
func lxcHotDelete(k string) bool {
	return lxcFastplug(k) || indexedKey(k, "unused") || k == "swap" || k == "cpulimit" || k == "cpuunits" || indexedKey(k, "net")
}

// checkMountPerm refuses what a token (not root@pam) may not put into rootfs/mpN.
func checkMountPerm(_, val string) error {
	ms := parseMount(val)
	switch ms.kind {
	case "bind", "device":
		return permErr(fmt.Sprintf("mount point type %s is only allowed for root@pam", ms.kind))
	}
	if reBareSize.MatchString(ms.volume) {
		return fail500("Only root can pass arbitrary filesystem paths.")
	}
	return nil
}

// checkCTModifyPerm mirrors check_ct_modify_config_perm for a non-root caller.
func checkCTModifyPerm(key, val string, unprivileged bool) error {
	switch {
	case isMountKey(key):
		return checkMountPerm(key, val)
	case indexedKey(key, "dev"):
		return permErr("configuring device passthrough is only allowed for root@pam")
	case key == "hookscript":
		return permErr("changing the hookscript is only allowed for root@pam")
	case key == "features":
		if !unprivileged {
			return permErr("changing feature flags for privileged container is only allowed for root@pam")
		}
		for _, part := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(part, "=")
			if k == "" || k == "nesting" {
				continue
			}
			if v == "0" {
				continue
			}
			return permErr("changing feature flags (except nesting) is only allowed for root@pam")
		}
	}
	return nil
}

var osFromTemplate = []struct{ prefix, ostype string }{
	{"debian", "debian"}, {"ubuntu", "ubuntu"}, {"alpine", "alpine"}, {"centos", "centos"},
	{"rockylinux", "centos"}, {"almalinux", "centos"}, {"fedora", "fedora"}, {"archlinux", "archlinux"},
	{"opensuse", "opensuse"}, {"gentoo", "gentoo"}, {"devuan", "devuan"}, {"nixos", "nixos"},
}

func detectOSType(tmpl string) string {
	base := tmpl
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	for _, o := range osFromTemplate {
		if strings.HasPrefix(base, o.prefix) {
			return o.ostype
		}
	}
	return "unmanaged"
}

// prepareMounts resolves rootfs/mpN values of a create or config change: STORAGE:N
// allocates, an existing volume is adopted. It returns the final value and the volumes
// allocated. Callers hold the write lock.
func (s *Sim) prepareMount(node string, vmid int, _, val string) (string, []string, error) {
	ms := parseMount(val)
	if ms.kind != "volume" {
		return val, nil, nil
	}
	if m := reNewDisk.FindStringSubmatch(ms.volume); m != nil {
		st := s.storages[m[1]]
		if st == nil {
			return "", nil, fail500("storage '%s' does not exist", m[1])
		}
		if !st.hasContent("rootdir") {
			return "", nil, fail500("storage '%s' does not support container directories", m[1])
		}
		gb, _ := strconv.ParseFloat(m[2], 64)
		size := gibToBytes(gb)
		if size == 0 && !(st.pathBased() || st.Type == "zfspool") {
			return "", nil, fail500("unable to create containers on storage '%s' with size 0", m[1])
		}
		v := s.allocVolume(st, node, vmid, true, size, "")
		ms.volume = v.volid()
		ms.opts["size"] = formatSize(size)
		if size == 0 {
			delete(ms.opts, "size")
			ms.opts["size"] = "0T"
		}
		return ms.String(), []string{v.volid()}, nil
	}
	st, v, err := s.lookupVolume(node, ms.volume)
	if err != nil {
		return "", nil, fail500("%v", err)
	}
	if !st.hasContent("rootdir") {
		return "", nil, fail500("storage '%s' does not support container directories", st.ID)
	}
	if _, ok := ms.opts["size"]; !ok {
		ms.opts["size"] = formatSize(v.Size)
	}
	return ms.String(), nil, nil
}

func (s *Sim) hLXCIndex(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ns := s.nodes[c.node]
	out := make([]*lxcStatusEntry, 0, len(s.byNode[c.node]))
	for _, g := range s.guestsOnNode(c.node, "lxc") {
		e := s.lxcStatus(g, false)
		if ns.opts.OldIndex {
			e.VMID = strconv.Itoa(g.vmid)
		}
		if ns.opts.NoSwapInIndex {
			e.Swap, e.MaxSwap = nil, nil
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Sim) hLXCConfigGet(c *reqCtx) (any, error) {
	return s.readGuest(c, "lxc", func(g *guest) any { return s.configOutput(g, c.boolean("current")) })
}

func (s *Sim) hLXCPending(c *reqCtx) (any, error) {
	return s.readGuest(c, "lxc", func(g *guest) any { return s.pendingOutput(g) })
}

var reResize = regexp.MustCompile(`^(\+)?(\d+(?:\.\d+)?)([KMGT])?$`)

func (s *Sim) hLXCResize(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	if err := checkDigest(c, g); err != nil {
		return nil, err
	}
	disk := c.str("disk")
	val, ok := g.conf[disk]
	if !ok {
		return nil, fail500("disk '%s' does not exist", disk)
	}
	ms := parseMount(val)
	if ms.kind != "volume" {
		return nil, fail500("you can't resize a mount point of type '%s'", ms.kind)
	}
	owner, err := s.volumeOwner(ms.volume)
	if err != nil {
		return nil, fail500("%v", err)
	}
	if owner != g.vmid {
		return nil, fail500("can't resize mount point owned by another container (%d)", owner)
	}
	_, vol, err := s.lookupVolume(g.node, ms.volume)
	if err != nil {
		return nil, fail500("%v", err)
	}
	size := vol.Size
	newSize, err := resizeTarget(c.str("size"), size)
	if err != nil {
		return nil, err
	}
	if newSize < size {
		return nil, fail500("unable to shrink disk size")
	}
	if newSize == size {
		return nil, fail500("disk is already at specified size")
	}
	t := s.newTask(c, g.node, "resize", strconv.Itoa(g.vmid))
	t.finish = func(t *task) error {
		vol.Size = newSize
		cur := parseMount(g.conf[disk])
		cur.opts["size"] = formatSize(newSize)
		g.conf[disk] = cur.String()
		t.logf("Size of logical volume changed to %s.", formatSize(newSize))
		return nil
	}
	return t.upid, nil
}

// resizeTarget computes the new size of a resize request ("+10G" or "40G"; bare bytes).
func resizeTarget(v string, cur int64) (int64, error) {
	m := reResize.FindStringSubmatch(v)
	if m == nil {
		return 0, paramErr(map[string]string{"size": "value does not match the regex pattern"})
	}
	n, _ := parseSize(m[2] + m[3])
	if m[1] == "+" {
		return cur + n, nil
	}
	return n, nil
}

func (s *Sim) hLXCInterfaces(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	if !g.running {
		return nil, fail500("CT %d is not running", g.vmid)
	}
	out := []map[string]any{{"name": "lo", "hwaddr": "00:00:00:00:00:00", "inet": "127.0.0.1/8", "inet6": "::1/128"}}
	for _, k := range sortedKeys(g.conf) {
		if !indexedKey(k, "net") {
			continue
		}
		kv := map[string]string{}
		for _, part := range strings.Split(g.conf[k], ",") {
			a, b, _ := strings.Cut(part, "=")
			kv[a] = b
		}
		e := map[string]any{"name": kv["name"], "hwaddr": strings.ToLower(kv["hwaddr"])}
		if ip := kv["ip"]; strings.Contains(ip, "/") {
			e["inet"] = ip
		}
		if ip := kv["ip6"]; strings.Contains(ip, "/") {
			e["inet6"] = ip
		}
		out = append(out, e)
	}
	return out, nil
}
