package pvesim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hVzdump simulates POST /nodes/{node}/vzdump for guests on that node (pve-manager
// API2/VZDump.pm): the guest carries lock "backup" while the task runs, and the archive
// appears on the storage when it ends. With no listed guest on the node the answer is
// the string "OK", not a UPID.
func (s *Sim) hVzdump(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.vzdumpStorage(c)
	if err != nil {
		return nil, err
	}
	local, err := s.vzdumpGuests(c)
	if err != nil {
		return nil, err
	}
	if len(local) == 0 {
		return "OK", nil
	}
	id := ""
	if len(local) == 1 {
		id = strconv.Itoa(local[0].vmid)
	}
	t := s.newTask(c, c.node, "vzdump", id)
	for _, g := range local {
		t.vmids = append(t.vmids, g.vmid)
	}
	for _, g := range local {
		g.conf["lock"] = "backup"
	}
	t.finish = func(t *task) error {
		for _, g := range local {
			if s.guests[g.vmid] != g {
				continue
			}
			if err := s.backUp(t, c, st, g); err != nil {
				return err
			}
		}
		return nil
	}
	t.rollback = func(*task) {
		for _, g := range local {
			if g.conf["lock"] == "backup" {
				delete(g.conf, "lock")
			}
		}
	}
	return t.upid, nil
}

// VzdumpRun is one vzdump task as the simulator ran it: its node, the guests it backed up,
// when it started and when it ended (zero while it runs), and its exit status.
type VzdumpRun struct {
	Node  string    `json:"node"`
	VMIDs []int     `json:"vmids"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Exit  string    `json:"exit"`
}

// Vzdumps lists every vzdump task since the simulator started, in start order: the log tests
// read to check that no node ever ran two at once.
func (s *Sim) Vzdumps() []VzdumpRun {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []VzdumpRun
	for _, t := range s.taskList {
		if t.typ != "vzdump" {
			continue
		}
		out = append(out, VzdumpRun{Node: t.node, VMIDs: slices.Clone(t.vmids), Start: t.started, End: t.ended, Exit: t.exit})
	}
	return out
}

// VzdumpOverlaps counts the pairs of vzdump tasks that ran at the same time on one node
// (Proxmox would have made the later one wait in lockwait).
func VzdumpOverlaps(runs []VzdumpRun) int {
	n := 0
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.Node != b.Node {
				continue
			}
			aEnd, bEnd := a.End, b.End
			if (aEnd.IsZero() || b.Start.Before(aEnd)) && (bEnd.IsZero() || a.Start.Before(bEnd)) {
				n++
			}
		}
	}
	return n
}

// vzdumpStorage is the backup storage of a vzdump call.
func (s *Sim) vzdumpStorage(c *reqCtx) (*storage, error) {
	if c.boolean("all") || c.has("pool") {
		return nil, fail500("pvesim: vzdump supports only an explicit vmid list")
	}
	storageID := c.str("storage")
	if storageID == "" {
		storageID = "local"
	}
	st := s.storages[storageID]
	if st == nil {
		return nil, fail500("storage '%s' does not exist", storageID)
	}
	if !st.hasContent("backup") {
		return nil, fail500("storage '%s' does not support backups", storageID)
	}
	if c.has("notes-template") && !c.has("storage") {
		return nil, paramErr(map[string]string{"notes-template": "missing property - 'storage' requires this property"})
	}
	return st, nil
}

// vzdumpGuests are the listed guests on the called node; vzdump checks the cluster's
// guest list, and the lock of each guest it backs up.
func (s *Sim) vzdumpGuests(c *reqCtx) ([]*guest, error) {
	var local []*guest
	for _, x := range splitList(c.str("vmid")) {
		id, err := strconv.Atoi(x)
		if err != nil {
			continue
		}
		g := s.guests[id]
		if g == nil {
			return nil, fail500("unable to find VM '%d'", id)
		}
		if g.node == c.node {
			local = append(local, g)
		}
	}
	for _, g := range local {
		if err := checkLock(g); err != nil {
			return nil, err
		}
	}
	return local, nil
}

// backUp ends one guest's backup: the lock goes, the archive appears on st, and unless the
// call said remove=0 the guest's older backups there are pruned by the storage's policy
// (or the call's prune-backups), as vzdump does.
func (s *Sim) backUp(t *task, c *reqCtx, st *storage, g *guest) error {
	delete(g.conf, "lock")
	mode := c.str("mode")
	if mode == "" {
		mode = "snapshot"
	}
	if !g.running {
		mode = "stop"
	}
	t.logf("Starting Backup of VM %d (%s)", g.vmid, g.typ)
	t.logf("Backup started at %s", s.now().UTC().Format("2006-01-02 15:04:05"))
	t.logf("%s mode", mode)
	name := fmt.Sprintf("backup/vzdump-%s-%d-%s.%s", g.typ, g.vmid, s.now().UTC().Format("2006_01_02-15_04_05"),
		archiveExt(g.typ, c.str("compress")))
	// The template is one line: `\n` is a newline and `\\` a backslash (VZDump.pm).
	notes := strings.NewReplacer("{{guestname}}", s.guestName(g), "{{vmid}}", strconv.Itoa(g.vmid),
		"{{node}}", g.node, "{{cluster}}", "pvesim", `\\`, `\`, `\n`, "\n").Replace(c.str("notes-template"))
	size := rootSize(g) / 5
	if size == 0 {
		size = 100 * mib
	}
	vnode := ""
	if !st.Shared {
		vnode = c.node
	}
	if s.vols[st.ID][name] != nil {
		return fmt.Errorf("unable to create backup archive '%s:%s' - file already exists", st.ID, name)
	}
	s.vols[st.ID][name] = &volume{Storage: st.ID, Name: name, Node: vnode, Size: size, Content: "backup",
		Format: backupFormat(name), Ctime: s.now().Unix(), Notes: notes, Protected: c.boolean("protected"), Config: copyMap(g.conf),
		Firewall: copyMap(g.firewall)}
	t.logf("creating vzdump archive '%s'", st.ID+":"+name)
	t.logf("Finished Backup of VM %d", g.vmid)
	if c.str("remove") != "0" {
		s.pruneBackups(t, st, g, vnode, keepLast(st, c.str("prune-backups")))
	}
	return nil
}

// keepLast is the keep-last count of the prune policy a vzdump applies: the call's
// prune-backups, else the storage's; 0 is keep-all. Only keep-all and keep-last are
// simulated.
func keepLast(st *storage, param string) int {
	policy := st.PruneBackups
	if param != "" {
		policy = param
	}
	for _, opt := range strings.Split(policy, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(opt), "=")
		switch k {
		case "keep-all":
			if v == "1" {
				return 0
			}
		case "keep-last":
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// pruneBackups removes the guest's backups of its type on st beyond the keep newest
// (by ctime); protected backups are neither counted nor removed (pve-storage
// prune_mark_backup_group).
func (s *Sim) pruneBackups(t *task, st *storage, g *guest, node string, keep int) {
	if keep <= 0 {
		return
	}
	prefix := fmt.Sprintf("backup/vzdump-%s-%d-", g.typ, g.vmid)
	var group []*volume
	for _, v := range s.vols[st.ID] {
		if v.Content == "backup" && strings.HasPrefix(v.Name, prefix) && !v.Protected && (v.Node == "" || v.Node == node) {
			group = append(group, v)
		}
	}
	sort.Slice(group, func(i, j int) bool { return group[i].Ctime > group[j].Ctime })
	for i, v := range group {
		if i < keep {
			continue
		}
		t.logf("prune older backup '%s'", v.volid())
		delete(s.vols[st.ID], v.Name)
	}
}

// archiveExt is a backup archive's extension: tar for a container, vma for a VM, and
// the compressor's suffix.
func archiveExt(typ, compress string) string {
	ext := "tar"
	if typ == "qemu" {
		ext = "vma"
	}
	switch compress {
	case "zstd", "1":
		ext += ".zst"
	case "gzip":
		ext += ".gz"
	case "lzo":
		ext += ".lzo"
	}
	return ext
}

// hVzdumpExtractConfig simulates GET /nodes/{node}/vzdump/extractconfig (pve-manager
// API2/VZDump.pm, pve-storage Storage.pm extract_vzdump_config): the volume must be of
// content backup, and an archive the node cannot see is "can't find file". The answer is the
// guest's config file as vzdump stored it, as text: the description as comment lines, then
// "key: value" lines sorted by key, without the lock, the pending changes and the snapshot
// sections (vzdump leaves those out).
func (s *Sim) hVzdumpExtractConfig(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	volid := c.str("volume")
	if volid == "" {
		return nil, paramErr(map[string]string{"volume": "property is missing and it is not optional"})
	}
	if err := s.checkVolumeAccess(volid, "backup"); err != nil {
		return nil, err
	}
	store, name, _ := splitVolid(volid)
	v := s.vols[store][name]
	if v == nil || v.Config == nil || (v.Node != "" && v.Node != c.node) {
		return nil, fail500("can't find file '%s'", volid)
	}
	return archiveConfigText(v.Config), nil
}

// archiveConfigText writes a config map as Proxmox writes a guest's config file.
func archiveConfigText(conf map[string]string) string {
	var b strings.Builder
	if d, ok := conf["description"]; ok {
		for _, line := range strings.Split(d, "\n") {
			b.WriteString("#" + line + "\n")
		}
	}
	for _, k := range sortedKeys(conf) {
		if k == "description" || k == "lock" || k == "digest" {
			continue
		}
		b.WriteString(k + ": " + conf[k] + "\n")
	}
	return b.String()
}
