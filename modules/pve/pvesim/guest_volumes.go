package pvesim

import "fmt"

// The volumes of guests: lookup, allocation, freeing and ownership (the vmid in a
// volume's name), and what happens to a volume a config change replaces.

// lookupVolume finds a volume that can be used from a node. Callers hold s.mu.
func (s *Sim) lookupVolume(node, volid string) (*storage, *volume, error) {
	store, name, ok := splitVolid(volid)
	if !ok {
		return nil, nil, fmt.Errorf("unable to parse volume ID '%s'", volid)
	}
	st := s.storages[store]
	if st == nil {
		return nil, nil, fmt.Errorf("storage '%s' does not exist", store)
	}
	v := s.vols[store][name]
	if v == nil || !(st.Shared || v.Node == "" || v.Node == node) {
		return st, nil, fmt.Errorf("volume '%s' does not exist", volid)
	}
	return st, v, nil
}

// allocVolume allocates a new volume named for vmid. Callers hold the write lock.
func (s *Sim) allocVolume(st *storage, node string, vmid int, forCT bool, size int64, format string) *volume {
	names := make([]string, 0, len(s.vols[st.ID]))
	for n := range s.vols[st.ID] {
		names = append(names, n)
	}
	name, fmtName := newVolumeName(st, names, vmid, forCT, size == 0, format)
	content := "images"
	if forCT {
		content = "rootdir"
	}
	vnode := ""
	if !st.Shared {
		vnode = node
	}
	v := &volume{Storage: st.ID, Name: name, Node: vnode, Size: size, Content: content, Format: fmtName, Ctime: s.now().Unix()}
	s.vols[st.ID][name] = v
	return v
}

// freeVolume removes a volume. Callers hold the write lock.
func (s *Sim) freeVolume(node, volid string) error {
	st, v, err := s.lookupVolume(node, volid)
	if err != nil {
		if st != nil {
			switch st.Type {
			case "lvmthin", "lvm":
				_, name, _ := splitVolid(volid)
				return fmt.Errorf("lvremove 'pve/%s' error:   Failed to find logical volume \"pve/%s\"", name, name)
			}
		}
		return err
	}
	if v.Protected {
		return fmt.Errorf("volume '%s' is protected", volid)
	}
	if info, err := parseVolname(st.Type, v.Name); err == nil && info.isBase {
		for _, other := range s.vols[st.ID] {
			oi, err := parseVolname(st.Type, other.Name)
			if err == nil && oi.baseVol == v.Name {
				return fmt.Errorf("base volume '%s' is still in use by linked cloned", volid)
			}
		}
	}
	delete(s.vols[st.ID], v.Name)
	return nil
}

// volumeOwner returns the owner vmid parsed from a volume id (0 = none).
func (s *Sim) volumeOwner(volid string) (int, error) {
	store, name, ok := splitVolid(volid)
	if !ok {
		return 0, fmt.Errorf("unable to parse volume ID '%s'", volid)
	}
	st := s.storages[store]
	if st == nil {
		return 0, fmt.Errorf("storage '%s' does not exist", store)
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return 0, err
	}
	return info.owner, nil
}

// errArbitraryPath is PVE::Storage::check_volume_access refusing a path to a non-root
// caller. The die has no newline, so Perl appends the source position.
func errArbitraryPath() error {
	return fail500("Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 651.")
}

// checkVolumeAccess mirrors PVE::Storage::check_volume_access for a token: paths are
// refused, the content type must match. Existence is not checked here. Callers hold s.mu.
func (s *Sim) checkVolumeAccess(volid, contentType string) error {
	store, name, ok := splitVolid(volid)
	if !ok {
		return errArbitraryPath()
	}
	st := s.storages[store]
	if st == nil {
		return fail500("storage '%s' does not exist", store)
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return fail500("%v", err)
	}
	if contentType != "" && info.vtype != contentType && !(contentType == "rootdir" && info.vtype == "images") {
		return fail500("unable to use volume %s - content type needs to be '%s'", volid, contentType)
	}
	return nil
}

// keepReplacedVolume turns the volume of a mount or drive that is removed or replaced
// by newVal ("" = removed) into an unusedN entry, as add_unused_volume does.
func keepReplacedVolume(g *guest, key, newVal string) {
	old, ok := g.conf[key]
	if !ok {
		return
	}
	isDisk := (g.typ == "lxc" && isMountKey(key)) || (g.typ == "qemu" && qemuDiskKey(key))
	if !isDisk {
		return
	}
	oms := parseMount(old)
	if oms.kind != "volume" || oms.volume == "none" || oms.volume == "cdrom" || oms.opts["media"] == "cdrom" {
		return
	}
	if newVal != "" && parseMount(newVal).volume == oms.volume {
		return
	}
	for k, v := range g.conf {
		if indexedKey(k, "unused") && v == oms.volume {
			return
		}
	}
	g.conf[nextUnusedKey(g.conf, g.pending)] = oms.volume
}
