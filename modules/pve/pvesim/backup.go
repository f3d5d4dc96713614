package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// hVzdump simulates POST /nodes/{node}/vzdump for guests on that node (pve-manager
// API2/VZDump.pm): the guest carries lock "backup" while the task runs, and the archive
// appears on the storage when it ends. With no listed guest on the node the answer is
// the string "OK", not a UPID.
func (s *Sim) hVzdump(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	var local []*guest
	for _, x := range splitList(c.str("vmid")) {
		id, err := strconv.Atoi(x)
		if err != nil {
			continue
		}
		g := s.guests[id]
		if g == nil {
			// vzdump checks the cluster's guest list
			return nil, fail500("unable to find VM '%d'", id)
		}
		if g.node == c.node {
			local = append(local, g)
		}
	}
	if len(local) == 0 {
		return "OK", nil
	}
	for _, g := range local {
		if err := checkLock(g); err != nil {
			return nil, err
		}
	}
	id := ""
	if len(local) == 1 {
		id = strconv.Itoa(local[0].vmid)
	}
	compress := c.str("compress")
	protected := c.boolean("protected")
	notesTmpl := c.str("notes-template")
	mode := c.str("mode")
	if mode == "" {
		mode = "snapshot"
	}
	t := s.newTask(c, c.node, "vzdump", id)
	for _, g := range local {
		g.conf["lock"] = "backup"
	}
	t.finish = func(t *task) error {
		for _, g := range local {
			if s.guests[g.vmid] != g {
				continue
			}
			delete(g.conf, "lock")
			m := mode
			if !g.running {
				m = "stop"
			}
			t.logf("Starting Backup of VM %d (%s)", g.vmid, g.typ)
			t.logf("Backup started at %s", s.now().UTC().Format("2006-01-02 15:04:05"))
			t.logf("%s mode", m)
			kind, ext := "lxc", "tar"
			if g.typ == "qemu" {
				kind, ext = "qemu", "vma"
			}
			switch compress {
			case "zstd", "1":
				ext += ".zst"
			case "gzip":
				ext += ".gz"
			case "lzo":
				ext += ".lzo"
			}
			name := fmt.Sprintf("backup/vzdump-%s-%d-%s.%s", kind, g.vmid, s.now().UTC().Format("2006_01_02-15_04_05"), ext)
			notes := strings.NewReplacer("{{guestname}}", s.guestName(g), "{{vmid}}", strconv.Itoa(g.vmid),
				"{{node}}", g.node, "{{cluster}}", "pvesim").Replace(notesTmpl)
			size := rootSize(g) / 5
			if size == 0 {
				size = 100 * mib
			}
			vnode := ""
			if !st.Shared {
				vnode = c.node
			}
			s.vols[st.ID][name] = &volume{Storage: st.ID, Name: name, Node: vnode, Size: size, Content: "backup",
				Format: backupFormat(name), Ctime: s.now().Unix(), Notes: notes, Protected: protected, Config: copyMap(g.conf)}
			t.logf("creating vzdump archive '%s'", st.ID+":"+name)
			t.logf("Finished Backup of VM %d", g.vmid)
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
