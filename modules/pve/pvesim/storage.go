package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// storageState is the storages, in their configured order, and the volumes on each. It
// is guarded by Sim.mu.
type storageState struct {
	storages map[string]*storage
	stOrder  []string
	vols     map[string]map[string]*volume
}

// resetStorage leaves the storages every node has: local (dir: vztmpl, iso, backup,
// rootdir, images, snippets) and local-lvm (lvmthin: rootdir, images).
func (ss *storageState) resetStorage() {
	ss.storages = map[string]*storage{}
	ss.stOrder = nil
	ss.vols = map[string]map[string]*volume{}
	ss.addStorage(&storage{ID: "local", Type: "dir", Content: []string{"backup", "images", "iso", "rootdir", "snippets", "vztmpl"}, Total: 100 * gib, Enabled: true})
	ss.addStorage(&storage{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Total: 400 * gib, Enabled: true})
}

// Storage endpoints after pve-storage's API2/Storage/Status.pm and Content.pm.

func (s *Sim) storageEntry(node string, st *storage) map[string]any {
	used := s.storageUsed(node, st)
	frac := 0.0
	if st.Total > 0 {
		frac = float64(used) / float64(st.Total)
	}
	return map[string]any{"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","),
		"active": 1, "enabled": boolInt(st.Enabled), "shared": boolInt(st.Shared), "total": st.Total,
		"used": used, "avail": st.Total - used, "used_fraction": roundTo(frac, 6)}
}

func (s *Sim) hStorageList(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	content := splitList(c.str("content"))
	out := []map[string]any{}
	for _, id := range s.stOrder {
		st := s.storages[id]
		if c.has("storage") && c.str("storage") != id {
			continue
		}
		if c.boolean("enabled") && !st.Enabled {
			continue
		}
		ok := len(content) == 0
		for _, ct := range content {
			if st.hasContent(ct) {
				ok = true
			}
		}
		if !ok {
			continue
		}
		out = append(out, s.storageEntry(c.node, st))
	}
	return out, nil
}

func (s *Sim) contentItem(st *storage, v *volume) map[string]any {
	e := map[string]any{"volid": v.volid(), "content": v.Content, "format": v.Format, "size": v.Size, "ctime": v.Ctime}
	if info, err := parseVolname(st.Type, v.Name); err == nil && info.owner != 0 {
		e["vmid"] = info.owner
	}
	switch v.Content {
	case "backup":
		sub := "unknown"
		switch {
		case strings.Contains(v.Name, "vzdump-lxc-"):
			sub = "lxc"
		case strings.Contains(v.Name, "vzdump-qemu-"):
			sub = "qemu"
		case strings.Contains(v.Name, "vzdump-openvz-"):
			sub = "openvz"
		}
		e["subtype"] = sub
		if v.Notes != "" {
			e["notes"] = strings.SplitN(v.Notes, "\n", 2)[0]
		}
		if v.Protected {
			e["protected"] = 1
		}
	case "images", "rootdir":
		used := v.Used
		if used == 0 {
			used = v.Size / 4
		}
		e["used"] = used
		delete(e, "ctime")
		if v.Format == "subvol" {
			e["used"] = used
		}
	}
	return e
}

func (s *Sim) hStorageContent(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.storages[c.str("storage")]
	if st == nil {
		return nil, fail500("storage '%s' does not exist", c.str("storage"))
	}
	content := c.str("content")
	vmid := c.str("vmid")
	out := []map[string]any{}
	for _, v := range s.vols[st.ID] {
		if !(st.Shared || v.Node == "" || v.Node == c.node) {
			continue
		}
		if content != "" && v.Content != content {
			// images of containers are listed as rootdir and vice versa only by their own type
			continue
		}
		if vmid != "" {
			if st.pathBased() {
				// dir-style storages match the file name on "-<vmid>-"
				if !strings.Contains(v.Name, "-"+vmid+"-") && !strings.HasPrefix(v.Name, vmid+"/") {
					continue
				}
			} else if info, err := parseVolname(st.Type, v.Name); err != nil || strconv.Itoa(info.owner) != vmid {
				continue
			}
		}
		out = append(out, s.contentItem(st, v))
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ToLower(out[i]["volid"].(string)) < strings.ToLower(out[j]["volid"].(string))
	})
	return out, nil
}

// requestVolume is the storage and volume a /storage/{storage}/content/{volume} request names
// (a volume id without its storage prefix gets it), or Proxmox's 500 for either missing. The
// caller holds s.mu.
func (s *Sim) requestVolume(c *reqCtx) (*storage, string, *volume, error) {
	st := s.storages[c.str("storage")]
	if st == nil {
		return nil, "", nil, fail500("storage '%s' does not exist", c.str("storage"))
	}
	volid := c.str("volume")
	if !strings.Contains(volid, ":") {
		volid = st.ID + ":" + volid
	}
	_, v, err := s.lookupVolume(c.node, volid)
	if err != nil {
		return nil, "", nil, fail500("%v", err)
	}
	return st, volid, v, nil
}

// hStorageVolume answers a volume's attributes (pve-storage API2/Storage/Content.pm info):
// unlike the listing, the whole notes.
func (s *Sim) hStorageVolume(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, _, v, err := s.requestVolume(c)
	if err != nil {
		return nil, err
	}
	e := map[string]any{"path": "/var/lib/vz/" + v.Name, "size": v.Size, "used": v.Size, "format": v.Format}
	if v.Notes != "" {
		e["notes"] = v.Notes
	}
	if v.Protected {
		e["protected"] = 1
	}
	return e, nil
}

func (s *Sim) hStorageContentDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, volid, v, err := s.requestVolume(c)
	if err != nil {
		return nil, err
	}
	if v.Protected {
		return nil, fail500("volume '%s' is protected", volid)
	}
	if v.Content == "images" || v.Content == "rootdir" {
		if info, err := parseVolname(st.Type, v.Name); err == nil && info.owner != 0 {
			if g := s.guests[info.owner]; g != nil && volumeReferenced(g, volid) {
				return nil, fail500("unable to delete volume '%s' - volume is still in use by guest %d", volid, info.owner)
			}
		}
	}
	// pve-storage forks imgdel without an id (API2/Storage/Content.pm): a volume name holds
	// "/", which a UPID cannot.
	t := s.newTask(c, c.node, "imgdel", "")
	t.finish = func(*task) error {
		delete(s.vols[st.ID], v.Name)
		return nil
	}
	return t.upid, nil
}

func volumeReferenced(g *guest, volid string) bool {
	check := func(m map[string]string) bool {
		for _, val := range m {
			if parseMount(val).volume == volid {
				return true
			}
		}
		return false
	}
	return check(g.conf) || check(g.pending)
}

// storageConfigEntry is a storage.cfg entry as GET /storage lists it.
func storageConfigEntry(st *storage) map[string]any {
	e := map[string]any{"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","), "digest": mapDigest(map[string]string{st.ID: st.Type})}
	if st.Shared {
		e["shared"] = 1
	}
	if st.PruneBackups != "" {
		e["prune-backups"] = st.PruneBackups
	}
	switch st.Type {
	case "dir":
		e["path"] = "/var/lib/vz"
		if st.ID != "local" {
			e["path"] = "/mnt/" + st.ID
		}
	case "lvmthin":
		e["vgname"], e["thinpool"] = "pve", "data"
	case "zfspool":
		e["pool"], e["sparse"] = "rpool/data", 1
	}
	return e
}

func (s *Sim) hStorageConfigList(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []map[string]any{}
	for _, id := range s.stOrder {
		st := s.storages[id]
		if c.has("type") && c.str("type") != st.Type {
			continue
		}
		out = append(out, storageConfigEntry(st))
	}
	return out, nil
}

func (s *Sim) hStorageConfigGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.storages[c.str("storage")]
	if st == nil {
		return nil, fail500("storage '%s' does not exist", c.str("storage"))
	}
	return storageConfigEntry(st), nil
}

// AddStorage configures an additional storage (type dir, lvmthin, lvm, zfspool, rbd,
// nfs, cifs, cephfs, btrfs) with its content types.
func (s *Sim) AddStorage(id, typ string, content []string, shared bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addStorage(&storage{ID: id, Type: typ, Content: append([]string(nil), content...), Shared: shared, Total: 1024 * gib, Enabled: true})
}

// SetStorageTotal sets a storage's size in bytes (1 TiB unless set): a benchmark's thousand
// guests at once need more room than a node's default storage has.
func (s *Sim) SetStorageTotal(id string, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.storages[id]; st != nil {
		st.Total = bytes
	}
}

// SetPruneBackups sets a storage's prune-backups policy ("keep-last=N", "keep-all=1" or
// "" for keep-all), which a vzdump without remove=0 applies.
func (s *Sim) SetPruneBackups(id, policy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.storages[id]; st != nil {
		st.PruneBackups = policy
	}
}

func (ss *storageState) addStorage(st *storage) {
	if _, ok := ss.storages[st.ID]; !ok {
		ss.stOrder = append(ss.stOrder, st.ID)
	}
	ss.storages[st.ID] = st
	if ss.vols[st.ID] == nil {
		ss.vols[st.ID] = map[string]*volume{}
	}
}

// AddVolume stores a volume (a leftover disk, a backup, a template). content is one of
// images, rootdir, vztmpl, iso, backup, snippets.
func (s *Sim) AddVolume(storageID, volname string, sizeBytes int64, content string) {
	s.AddVolumeOn("", storageID, volname, sizeBytes, content)
}

// AddVolumeOn is AddVolume for a node-local storage on one node ("" = every node).
func (s *Sim) AddVolumeOn(node, storageID, volname string, sizeBytes int64, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storages[storageID]
	if st == nil {
		return
	}
	v := &volume{Storage: storageID, Name: volname, Node: node, Size: sizeBytes, Content: content, Ctime: s.now().Unix()}
	info, err := parseVolname(st.Type, volname)
	if err == nil {
		v.Format = info.format
	}
	switch content {
	case "vztmpl":
		v.Format = tmplFormat(volname)
	case "backup":
		v.Format = backupFormat(volname)
		v.Ctime = backupCtime(volname, v.Ctime)
	case "iso":
		v.Format = "iso"
	}
	s.vols[storageID][volname] = v
}

// SetVolumeProtected marks a backup volume protected (or not) and sets its notes.
func (s *Sim) SetVolumeProtected(storageID, volname string, protected bool, notes string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.vols[storageID][volname]; v != nil {
		v.Protected = protected
		v.Notes = notes
	}
}

var reBackupTime = regexp.MustCompile(`-(\d{4})_(\d{2})_(\d{2})-(\d{2})_(\d{2})_(\d{2})\.`)

func backupCtime(name string, def int64) int64 {
	m := reBackupTime.FindStringSubmatch(name)
	if m == nil {
		return def
	}
	t, err := time.Parse("2006-01-02 15:04:05", fmt.Sprintf("%s-%s-%s %s:%s:%s", m[1], m[2], m[3], m[4], m[5], m[6]))
	if err != nil {
		return def
	}
	return t.Unix()
}

// Volumes lists the volume names on a storage, sorted.
func (s *Sim) Volumes(storageID string) []string {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for n := range s.vols[storageID] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// VolumeSize is a volume's size in bytes (0 when there is none).
func (s *Sim) VolumeSize(storageID, volname string) int64 {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v := s.vols[storageID][volname]; v != nil {
		return v.Size
	}
	return 0
}
