package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VM endpoints after qemu-server's API2/Qemu.pm and API2/Qemu/Agent.pm.

// qemuFastPlug are keys a running VM takes at once ($fast_plug_option).
func qemuFastPlug(k string) bool {
	switch k {
	case "lock", "name", "onboot", "shares", "startup", "description", "protection", "vmstatestorage", "hookscript", "tags":
		return true
	}
	return false
}

func (s *Sim) hQemuConfigGet(c *reqCtx) (any, error) {
	return s.readGuest(c, "qemu", func(g *guest) any { return s.configOutput(g, c.boolean("current")) })
}

func (s *Sim) hQemuPending(c *reqCtx) (any, error) {
	return s.readGuest(c, "qemu", func(g *guest) any { return s.pendingOutput(g) })
}

var reQemuNewDisk = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):(\d+(?:\.\d+)?|cloudinit)$`)

// prepareQemuDisk allocates STORE:N and STORE:cloudinit drives. Callers hold the write lock.
func (s *Sim) prepareQemuDisk(g *guest, _, val string) (string, []string, error) {
	ms := parseMount(val)
	m := reQemuNewDisk.FindStringSubmatch(ms.volume)
	if m == nil {
		if ms.volume != "none" && ms.volume != "cdrom" && !strings.HasPrefix(ms.volume, "/") {
			if _, _, err := s.lookupVolume(g.node, ms.volume); err != nil {
				return "", nil, fail500("%v", err)
			}
		}
		return val, nil, nil
	}
	st := s.storages[m[1]]
	if st == nil {
		return "", nil, fail500("storage '%s' does not exist", m[1])
	}
	if !st.hasContent("images") {
		return "", nil, fail500("storage '%s' does not support vm images", m[1])
	}
	if m[2] == "cloudinit" {
		name := fmt.Sprintf("vm-%d-cloudinit", g.vmid)
		format := "raw"
		if st.pathBased() {
			name = fmt.Sprintf("%d/vm-%d-cloudinit.qcow2", g.vmid, g.vmid)
			format = "qcow2"
		}
		if _, exists := s.vols[st.ID][name]; exists {
			return "", nil, fail500("cloud-init drive '%s:%s' already exists", st.ID, name)
		}
		vnode := ""
		if !st.Shared {
			vnode = g.node
		}
		s.vols[st.ID][name] = &volume{Storage: st.ID, Name: name, Node: vnode, Size: 4 * mib, Content: "images", Format: format, Ctime: s.now().Unix()}
		ms.volume = st.ID + ":" + name
		ms.opts["media"] = "cdrom"
		return qemuDriveString(ms), []string{st.ID + ":" + name}, nil
	}
	gb, _ := strconv.ParseFloat(m[2], 64)
	size := gibToBytes(gb)
	v := s.allocVolume(st, g.node, g.vmid, false, size, ms.opts["format"])
	delete(ms.opts, "format")
	ms.volume = v.volid()
	ms.opts["size"] = formatSize(size)
	return qemuDriveString(ms), []string{v.volid()}, nil
}

// qemuDriveString prints a drive: the volume first, the other keys sorted.
func qemuDriveString(ms mountSpec) string {
	var b strings.Builder
	b.WriteString(ms.volume)
	for _, k := range sortedKeys(ms.opts) {
		b.WriteString("," + k + "=" + ms.opts[k])
	}
	return b.String()
}

// qemuNetWithMAC makes sure a QEMU netN value carries a MAC ("virtio,bridge=x" → "virtio=MAC,bridge=x").
func (s *Sim) qemuNetWithMAC(vmid int, v string) string {
	parts := strings.Split(v, ",")
	if len(parts) > 0 && !strings.Contains(parts[0], "=") {
		parts[0] = parts[0] + "=" + s.nextMAC(vmid)
		return strings.Join(parts, ",")
	}
	if strings.HasPrefix(parts[0], "model=") && !strings.Contains(v, "macaddr=") {
		model := strings.TrimPrefix(parts[0], "model=")
		parts[0] = model + "=" + s.nextMAC(vmid)
		return strings.Join(parts, ",")
	}
	return v
}

func (s *Sim) hQemuConfigPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	return nil, s.updateQemuConfig(c, g)
}

func (s *Sim) hQemuConfigPost(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := s.updateQemuConfig(c, g); err != nil {
		return nil, err
	}
	t := s.newTask(c, g.node, "qmconfig", strconv.Itoa(g.vmid))
	t.logf("update VM %d: %s", g.vmid, configChangeSummary(c))
	if c.has("background_delay") && !t.due.After(s.now()) && t.failWith == "" {
		s.completeTask(t)
		if t.exit == "OK" {
			return nil, nil
		}
	}
	return t.upid, nil
}

func configChangeSummary(c *reqCtx) string {
	var parts []string
	for _, k := range sortedKeys(c.params) {
		switch k {
		case "node", "vmid", "digest":
			continue
		case "cipassword", "sshkeys":
			parts = append(parts, "-"+k+" <hidden>")
			continue
		}
		parts = append(parts, "-"+k+" "+c.str(k))
	}
	return strings.Join(parts, " ")
}

func (s *Sim) hQemuResize(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	vmid := c.integer("vmid")
	node := c.node
	disk := c.str("disk")
	sizeStr := c.str("size")
	digest := c.str("digest")
	t := s.newTask(c, node, "resize", strconv.Itoa(vmid))
	// since qemu-server 8.0 every check runs inside the worker
	t.finish = func(t *task) error {
		g := s.guests[vmid]
		if g == nil || g.node != node || g.typ != "qemu" {
			return pveErrorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
		}
		if err := checkLock(g); err != nil {
			return err
		}
		if digest != "" && digest != configDigest(g) {
			return pveErrorf("detected modified configuration - file changed by other user? Try again.")
		}
		val, ok := g.conf[disk]
		if !ok {
			return fmt.Errorf("disk '%s' does not exist", disk)
		}
		ms := parseMount(val)
		if ms.opts["media"] == "cdrom" {
			return fmt.Errorf("you can't resize a cdrom")
		}
		_, vol, err := s.lookupVolume(g.node, ms.volume)
		if err != nil {
			return err
		}
		newSize, err := resizeTarget(sizeStr, vol.Size)
		if err != nil {
			return fmt.Errorf("invalid size '%s'", sizeStr)
		}
		if newSize < vol.Size {
			return fmt.Errorf("shrinking disks is not supported")
		}
		if newSize == vol.Size {
			return nil
		}
		vol.Size = newSize
		ms.opts["size"] = formatSize(newSize)
		g.conf[disk] = qemuDriveString(ms)
		t.logf("Image resized.")
		return nil
	}
	return t.upid, nil
}

func (s *Sim) newUUID(vmid int, salt uint64) string {
	s.macSeq++
	a := mix(uint64(s.opts.Seed) ^ uint64(vmid)<<8 ^ salt ^ s.macSeq<<32)
	b := mix(a ^ 0x5bd1e995)
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, (uint16(b>>48)&0x3fff)|0x8000, b&0xffffffffffff)
}

func (s *Sim) newSMBIOS(vmid int, old string) string {
	parts := strings.Split(old, ",")
	for i, p := range parts {
		if strings.HasPrefix(p, "uuid=") {
			parts[i] = "uuid=" + s.newUUID(vmid, 2)
			return strings.Join(parts, ",")
		}
	}
	return "uuid=" + s.newUUID(vmid, 2)
}
