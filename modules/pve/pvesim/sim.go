package pvesim

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a simulated cluster.
type Options struct {
	Nodes        []string      // default []string{"pve1","pve2"}
	TokenID      string        // default "pvebill@pve!provision"
	TokenSecret  string        // default "00000000-0000-0000-0000-000000000000"
	PVEMajor     int           // 8 or 9 (default 9)
	TaskDuration time.Duration // default 0: a task is stopped at its first status read
	Seed         int64

	// AuthFailDelay delays every 401 answer; real Proxmox waits about 3 s. Default 0.
	AuthFailDelay time.Duration
	// NextIDLower and NextIDUpper are datacenter.cfg's next-id range (default 100 and
	// 1000000, upper exclusive).
	NextIDLower, NextIDUpper int
	// Now is the simulator's clock source (default time.Now). Advance shifts it.
	Now func() time.Time
	// MaxLog caps the request log (0 = unlimited); the oldest entries are dropped first.
	// Useful for a long-running simulator process.
	MaxLog int
}

// Guest describes a guest to seed with SeedGuest.
type Guest struct {
	VMID          int               `json:"vmid"`
	Type          string            `json:"type"` // "lxc" or "qemu"
	Node          string            `json:"node"`
	Config        map[string]string `json:"config"`
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pending_delete,omitempty"`
	Running       bool              `json:"running"`
	Paused        bool              `json:"paused,omitempty"`
	Template      bool              `json:"template"`
	// LXC holds raw lxc.* entries of a container config, in order.
	LXC [][2]string `json:"lxc,omitempty"`
	// HAState makes the guest HA-managed with this requested state ("started", "stopped").
	HAState string `json:"ha_state,omitempty"`
}

// GuestSnapshot is a guest's state for assertions.
type GuestSnapshot struct {
	VMID          int                 `json:"vmid"`
	Type          string              `json:"type"`
	Node          string              `json:"node"`
	Config        map[string]string   `json:"config"`
	Pending       map[string]string   `json:"pending"`
	PendingDelete []string            `json:"pending_delete"`
	Status        string              `json:"status"` // running, stopped
	Paused        bool                `json:"paused"`
	Lock          string              `json:"lock"`
	Firewall      map[string]string   `json:"firewall"`
	IPSets        map[string][]string `json:"ipsets"`
	HAState       string              `json:"ha_state,omitempty"`
}

// NodeOptions are per-node behaviour switches.
type NodeOptions struct {
	OldIndex      bool          `json:"old_index"`        // /nodes/{node}/lxc gives vmid as a string (before PVE 8.2)
	NoSwapInIndex bool          `json:"no_swap_in_index"` // /nodes/{node}/lxc lacks swap/maxswap
	MaxConcurrent int           `json:"max_concurrent"`   // requests beyond this wait (0 = unlimited)
	Latency       time.Duration `json:"latency"`          // added to every request for the node
}

// Request is one entry of the request log.
type Request struct {
	Method string     `json:"method"`
	Path   string     `json:"path"` // relative to /api2/json
	Form   url.Values `json:"form"`
	Status int        `json:"status"`
	Time   time.Time  `json:"time"`
	Node   string     `json:"node"`
}

// Fault is an injected failure. A fault matches requests by Method ("" = any) and
// PathPattern: a schema template ("/nodes/{node}/lxc"), a concrete path, or a regular
// expression matched against the path relative to /api2/json. A fault that answers by
// itself (Status without After, DropConn, Hang) does so before authentication and the
// schema checks, so such a request is never recorded as a schema violation.
type Fault struct {
	Method      string `json:"method"`
	PathPattern string `json:"path_pattern"`
	// Nth is the 1-based number of the matching request that triggers the fault; 0 means
	// every matching request.
	Nth int `json:"nth"`
	// Times limits how often the fault fires (0: once when Nth > 0, unlimited otherwise).
	Times int `json:"times"`

	Status  int    `json:"status"`  // answer with this HTTP status
	Message string `json:"message"` // error message for Status (Proxmox envelope)
	Body    string `json:"body"`    // raw body for Status, overriding Message
	// After applies the request first and only then answers with Status or drops the
	// connection: the work is done although the client sees a failure (like a 596).
	After    bool          `json:"after"`
	DropConn bool          `json:"drop_conn"`
	Hang     bool          `json:"hang"` // never answer (until the client gives up or faults are cleared)
	Delay    time.Duration `json:"delay"`
	// TaskFail makes the task started by the matched call fail with this exit status.
	TaskFail string `json:"task_fail"`
	// TaskWarnings makes the task started by the matched call end with "WARNINGS: n".
	TaskWarnings int `json:"task_warnings"`
}

type faultState struct {
	id    int
	f     Fault
	re    *regexp.Regexp
	seen  int
	fired int
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

type ipsetEntry struct {
	CIDR    string `json:"cidr"`
	Comment string `json:"comment,omitempty"`
	NoMatch bool   `json:"nomatch,omitempty"`
}

type ipset struct {
	Name    string
	Comment string
	Entries []ipsetEntry
}

// guest is the simulator's state of one guest. It is guarded by Sim.mu.
type guest struct {
	vmid          int
	typ           string
	node          string
	conf          map[string]string
	pending       map[string]string
	pendingDelete map[string]bool
	lxcRaw        [][2]string
	running       bool
	paused        bool
	startedAt     time.Time
	pid           int
	firewall      map[string]string
	ipsets        map[string]*ipset
	ciGenerated   map[string]string
}

type haResource struct {
	SID   string
	State string
}

// Sim is a simulated Proxmox VE cluster serving the HTTP API.
type Sim struct {
	opts   Options
	schema *apiSchema
	routes map[string]handlerFunc
	// control serves the control API under /_sim/.
	control *http.ServeMux
	// lxcConf and qemuConf are the config parameter schemas (key existence and types).
	lxcConf, qemuConf *schemaMethod

	mu        sync.RWMutex
	guests    map[int]*guest
	byNode    map[string]map[int]*guest
	nodeOrder []string
	nodes     map[string]*nodeState
	storages  map[string]*storage
	stOrder   []string
	vols      map[string]map[string]*volume
	tasks     map[string]*task
	taskList  []*task
	taskDur   map[string]time.Duration
	clusterFW map[string]string
	ha        map[string]*haResource
	pools     map[string]*pool
	pidSeq    int
	macSeq    uint64
	nextDue   atomic.Int64 // unix nanos of the earliest due running task; 0 = none
	clockOff  atomic.Int64

	logMu      sync.Mutex
	log        []Request
	violations []Violation
	lxcSuspend int

	faultMu  sync.Mutex
	faults   []*faultState
	faultSeq int
	hangCh   chan struct{}
}

const (
	defaultTokenID     = "pvebill@pve!provision"
	defaultTokenSecret = "00000000-0000-0000-0000-000000000000"
)

// New returns an empty cluster: the nodes, and on each the storages local (dir:
// vztmpl, iso, backup, rootdir, images, snippets) and local-lvm (lvmthin: rootdir, images).
func New(opts Options) *Sim {
	if len(opts.Nodes) == 0 {
		opts.Nodes = []string{"pve1", "pve2"}
	}
	if opts.TokenID == "" {
		opts.TokenID = defaultTokenID
	}
	if opts.TokenSecret == "" {
		opts.TokenSecret = defaultTokenSecret
	}
	if opts.PVEMajor == 0 {
		opts.PVEMajor = 9
	}
	if opts.NextIDLower == 0 {
		opts.NextIDLower = 100
	}
	if opts.NextIDUpper == 0 {
		opts.NextIDUpper = 1000000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sc, err := loadSchema()
	if err != nil {
		panic(fmt.Sprintf("pvesim: embedded schema: %v", err))
	}
	s := &Sim{opts: opts, schema: sc, hangCh: make(chan struct{}),
		lxcConf: lookupConfigSchema(sc, "lxc"), qemuConf: lookupConfigSchema(sc, "qemu")}
	s.routes = s.buildRoutes()
	s.control = s.buildControl()
	s.resetState()
	return s
}

// resetState (re)creates the empty cluster. Callers hold no lock or the write lock.
func (s *Sim) resetState() {
	s.guests = map[int]*guest{}
	s.byNode = map[string]map[int]*guest{}
	s.nodes = map[string]*nodeState{}
	s.nodeOrder = append([]string(nil), s.opts.Nodes...)
	for _, n := range s.opts.Nodes {
		s.nodes[n] = &nodeState{name: n, online: true}
	}
	s.storages = map[string]*storage{}
	s.stOrder = nil
	s.vols = map[string]map[string]*volume{}
	s.addStorage(&storage{ID: "local", Type: "dir", Content: []string{"backup", "images", "iso", "rootdir", "snippets", "vztmpl"}, Total: 100 * gib, Enabled: true})
	s.addStorage(&storage{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Total: 400 * gib, Enabled: true})
	s.tasks = map[string]*task{}
	s.taskList = nil
	s.taskDur = map[string]time.Duration{}
	s.clusterFW = map[string]string{}
	s.ha = map[string]*haResource{}
	s.pools = map[string]*pool{}
	s.pidSeq = 0
	s.macSeq = 0
	s.nextDue.Store(0)
}

func (s *Sim) addStorage(st *storage) {
	if _, ok := s.storages[st.ID]; !ok {
		s.stOrder = append(s.stOrder, st.ID)
	}
	s.storages[st.ID] = st
	if s.vols[st.ID] == nil {
		s.vols[st.ID] = map[string]*volume{}
	}
}

// AddStorage configures an additional storage (type dir, lvmthin, lvm, zfspool, rbd,
// nfs, cifs, cephfs, btrfs) with its content types.
func (s *Sim) AddStorage(id, typ string, content []string, shared bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addStorage(&storage{ID: id, Type: typ, Content: append([]string(nil), content...), Shared: shared, Total: 1024 * gib, Enabled: true})
}

// Demo returns a seeded cluster: container templates for Debian 12 and Ubuntu 24.04 on
// local, the VM template 9000 on pve1 (scsi0 on local-lvm, ide2 cloud-init), a ZFS
// storage local-zfs, a running container 200 and a stopped VM 300.
func Demo(opts Options) *Sim {
	s := New(opts)
	s.AddStorage("local-zfs", "zfspool", []string{"images", "rootdir"}, false)
	s.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126*mib, "vztmpl")
	s.AddVolume("local", "vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst", 141*mib, "vztmpl")
	s.AddVolume("local", "iso/debian-12.7.0-amd64-netinst.iso", 631*mib, "iso")
	n1 := s.nodeOrder[0]
	must := func(err error) {
		if err != nil {
			panic("pvesim: demo: " + err.Error())
		}
	}
	must(s.SeedGuest(Guest{VMID: 9000, Type: "qemu", Node: n1, Template: true, Config: map[string]string{
		"name": "debian-12-cloud", "memory": "2048", "cores": "2", "sockets": "1", "ostype": "l26",
		"scsihw": "virtio-scsi-single", "scsi0": "local-lvm:base-9000-disk-0,size=8G",
		"ide2": "local-lvm:vm-9000-cloudinit,media=cdrom", "boot": "order=scsi0", "agent": "1",
		"net0": "virtio=BC:24:11:00:90:00,bridge=vmbr0,firewall=1", "serial0": "socket", "vga": "serial0",
		"smbios1": "uuid=6f1d2c3b-9000-4a5b-8c7d-000000009000", "vmgenid": "00000000-0000-4000-8000-000000009000",
	}}))
	must(s.SeedGuest(Guest{VMID: 200, Type: "lxc", Node: n1, Running: true, Config: map[string]string{
		"arch": "amd64", "hostname": "demo-ct", "memory": "1024", "swap": "512", "cores": "1",
		"ostype": "debian", "rootfs": "local-lvm:vm-200-disk-0,size=8G", "unprivileged": "1",
		"net0": "name=eth0,bridge=vmbr0,firewall=1,gw=192.0.2.1,hwaddr=BC:24:11:00:02:00,ip=192.0.2.200/24,type=veth",
		"tags": "demo",
	}}))
	must(s.SeedGuest(Guest{VMID: 300, Type: "qemu", Node: n1, Config: map[string]string{
		"name": "demo-vm", "memory": "2048", "cores": "2", "ostype": "l26", "scsihw": "virtio-scsi-single",
		"scsi0": "local-lvm:vm-300-disk-0,size=16G", "ide2": "local-lvm:vm-300-cloudinit,media=cdrom",
		"net0": "virtio=BC:24:11:00:03:00,bridge=vmbr0,firewall=1", "boot": "order=scsi0", "agent": "1",
	}}))
	return s
}

// Reset returns the simulator to the state New gave it: no guests, tasks, faults or log.
func (s *Sim) Reset() {
	s.mu.Lock()
	s.resetState()
	s.mu.Unlock()
	s.ClearFaults()
	s.ResetLog()
	s.clockOff.Store(0)
}

// now is the simulator clock.
func (s *Sim) now() time.Time {
	return s.opts.Now().Add(time.Duration(s.clockOff.Load()))
}

// Now returns the simulator's current time.
func (s *Sim) Now() time.Time { return s.now() }

// Advance moves the simulator clock forward (running tasks may become due).
func (s *Sim) Advance(d time.Duration) {
	s.clockOff.Add(int64(d))
	s.settle()
}

// Requests returns a copy of the request log.
func (s *Sim) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	return out
}

// ResetLog empties the request log and the schema violations.
func (s *Sim) ResetLog() {
	s.logMu.Lock()
	s.log = nil
	s.violations = nil
	s.lxcSuspend = 0
	s.logMu.Unlock()
}

// SchemaViolations lists every request real Proxmox would have refused by its API schema
// (unknown path or method, unknown, missing or malformed parameters).
func (s *Sim) SchemaViolations() []Violation {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// LXCSuspendCalls counts POST .../lxc/{vmid}/status/suspend requests since the last ResetLog.
func (s *Sim) LXCSuspendCalls() int {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.lxcSuspend
}

func (s *Sim) guestTypeName(typ string) string {
	if typ == "lxc" {
		return "CT"
	}
	return "VM"
}

// SeedGuest puts a guest into the cluster as if it had been created earlier. Volumes its
// config references on known storages are created when missing.
func (s *Sim) SeedGuest(g Guest) error {
	if g.Type != "lxc" && g.Type != "qemu" {
		return fmt.Errorf("guest %d: type must be lxc or qemu, got %q", g.VMID, g.Type)
	}
	if g.VMID < 100 || g.VMID > 999999999 {
		return fmt.Errorf("guest %d: vmid out of range", g.VMID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.Node == "" {
		g.Node = s.nodeOrder[0]
	}
	if _, ok := s.nodes[g.Node]; !ok {
		return fmt.Errorf("guest %d: no such node %q", g.VMID, g.Node)
	}
	if old, ok := s.guests[g.VMID]; ok {
		return fmt.Errorf("%s %d already exists on node '%s'", s.guestTypeName(old.typ), g.VMID, old.node)
	}
	ng := &guest{vmid: g.VMID, typ: g.Type, node: g.Node, conf: map[string]string{}, pending: map[string]string{},
		pendingDelete: map[string]bool{}, firewall: map[string]string{}, ipsets: map[string]*ipset{}}
	for k, v := range g.Config {
		ng.conf[k] = v
	}
	for k, v := range g.Pending {
		ng.pending[k] = v
	}
	for _, k := range g.PendingDelete {
		ng.pendingDelete[k] = true
	}
	ng.lxcRaw = append([][2]string(nil), g.LXC...)
	if g.Template {
		ng.conf["template"] = "1"
	}
	if g.Running && !g.Template {
		ng.running = true
		ng.paused = g.Paused
		ng.startedAt = s.now().Add(-time.Duration(1000+g.VMID%5000) * time.Second)
		s.pidSeq++
		ng.pid = 100000 + s.pidSeq
		ng.ciGenerated = ciSnapshot(ng.conf)
	}
	s.addGuest(ng)
	if g.HAState != "" {
		sid := haSID(ng)
		s.ha[sid] = &haResource{SID: sid, State: g.HAState}
	}
	for _, k := range sortedKeys(ng.conf) {
		s.ensureVolumeFor(ng, k, ng.conf[k])
	}
	for _, k := range sortedKeys(ng.pending) {
		s.ensureVolumeFor(ng, k, ng.pending[k])
	}
	return nil
}

// ensureVolumeFor creates the storage volume a seeded config entry references.
func (s *Sim) ensureVolumeFor(g *guest, key, val string) {
	var volPart string
	var size int64
	switch {
	case g.typ == "lxc" && (isMountKey(key) || indexedKey(key, "unused")):
		ms := parseMount(val)
		if ms.kind != "volume" {
			return
		}
		volPart = ms.volume
		size, _ = parseSize(ms.opts["size"])
	case g.typ == "qemu" && (qemuDiskKey(key) || indexedKey(key, "unused")):
		ms := parseMount(val)
		if ms.volume == "none" || ms.volume == "cdrom" {
			return
		}
		volPart = ms.volume
		size, _ = parseSize(ms.opts["size"])
		if strings.Contains(volPart, "cloudinit") {
			size = 4 * mib
		}
	default:
		return
	}
	store, name, ok := splitVolid(volPart)
	if !ok {
		return
	}
	st := s.storages[store]
	if st == nil {
		return
	}
	if _, exists := s.vols[store][name]; exists {
		return
	}
	content := "images"
	if g.typ == "lxc" {
		content = "rootdir"
	}
	if size == 0 {
		size = 4 * gib
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return
	}
	node := ""
	if !st.Shared {
		node = g.node
	}
	if info.baseVol != "" && st.Type == "zfspool" {
		base := info.baseVol
		if _, ok := s.vols[store][base]; !ok {
			s.vols[store][base] = &volume{Storage: store, Name: base, Node: node, Size: size, Content: content, Format: "raw", Ctime: s.now().Unix()}
		}
	}
	s.vols[store][name] = &volume{Storage: store, Name: name, Node: node, Size: size, Content: content, Format: info.format, Ctime: s.now().Unix()}
}

// SetConfig changes a guest's active config behind pvebill's back; "" deletes the key.
func (s *Sim) SetConfig(vmid int, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guests[vmid]
	if g == nil {
		return fmt.Errorf("guest %d does not exist", vmid)
	}
	if value == "" {
		delete(g.conf, key)
		return nil
	}
	g.conf[key] = value
	s.ensureVolumeFor(g, key, value)
	return nil
}

// Guest returns a guest's state.
func (s *Sim) Guest(vmid int) (GuestSnapshot, bool) {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guests[vmid]
	if g == nil {
		return GuestSnapshot{}, false
	}
	snap := GuestSnapshot{VMID: g.vmid, Type: g.typ, Node: g.node, Config: copyMap(g.conf), Pending: copyMap(g.pending),
		Paused: g.paused, Lock: g.conf["lock"], Firewall: copyMap(g.firewall), IPSets: map[string][]string{}, Status: "stopped"}
	if g.running {
		snap.Status = "running"
	}
	for k := range g.pendingDelete {
		snap.PendingDelete = append(snap.PendingDelete, k)
	}
	sort.Strings(snap.PendingDelete)
	for name, set := range g.ipsets {
		var cidrs []string
		for _, e := range set.Entries {
			cidrs = append(cidrs, e.CIDR)
		}
		snap.IPSets[name] = cidrs
	}
	if r := s.ha[haSID(g)]; r != nil {
		snap.HAState = r.State
	}
	return snap, true
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

// InjectFault adds a fault and returns its id.
func (s *Sim) InjectFault(f Fault) int {
	fs := &faultState{f: f}
	if f.PathPattern != "" && !strings.Contains(f.PathPattern, "{") {
		if re, err := regexp.Compile("^(?:" + f.PathPattern + ")$"); err == nil {
			fs.re = re
		}
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faultSeq++
	fs.id = s.faultSeq
	s.faults = append(s.faults, fs)
	return fs.id
}

// ClearFaults removes all faults and releases hanging requests.
func (s *Sim) ClearFaults() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = nil
	close(s.hangCh)
	s.hangCh = make(chan struct{})
}

// SetTaskDuration sets how long tasks of a type (e.g. "vzcreate") run; "" sets the default.
func (s *Sim) SetTaskDuration(taskType string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if taskType == "" {
		s.opts.TaskDuration = d
		return
	}
	s.taskDur[taskType] = d
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func haSID(g *guest) string {
	if g.typ == "lxc" {
		return "ct:" + strconv.Itoa(g.vmid)
	}
	return "vm:" + strconv.Itoa(g.vmid)
}

// addGuest registers a guest. Callers hold the write lock.
func (s *Sim) addGuest(g *guest) {
	s.guests[g.vmid] = g
	m := s.byNode[g.node]
	if m == nil {
		m = map[int]*guest{}
		s.byNode[g.node] = m
	}
	m[g.vmid] = g
}

// removeGuest forgets a guest. Callers hold the write lock.
func (s *Sim) removeGuest(g *guest) {
	for _, p := range s.pools {
		delete(p.members, g.vmid)
	}
	if s.guests[g.vmid] == g {
		delete(s.guests, g.vmid)
	}
	if m := s.byNode[g.node]; m != nil && m[g.vmid] == g {
		delete(m, g.vmid)
	}
}

// guestsOnNode returns the guests of a node sorted by vmid. Callers hold s.mu.
func (s *Sim) guestsOnNode(node, typ string) []*guest {
	out := make([]*guest, 0, len(s.byNode[node]))
	for _, g := range s.byNode[node] {
		if typ == "" || g.typ == typ {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].vmid < out[j].vmid })
	return out
}
