package pvesim

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file is the simulator's own implementation of Proxmox's volume naming, size
// formatting and ownership rules (pve-storage plugins, pve-common parse_size/format_size).
// It deliberately shares no code with pvebill's client parsers.

const (
	kib = int64(1024)
	mib = 1024 * kib
	gib = 1024 * mib
	tib = 1024 * gib
)

// formatSize writes a byte count in the largest exact unit, like PVE::JSONSchema::format_size.
func formatSize(n int64) string {
	if n%kib != 0 {
		return strconv.FormatInt(n, 10)
	}
	k := n / kib
	if k%1024 != 0 {
		return strconv.FormatInt(k, 10) + "K"
	}
	m := k / 1024
	if m%1024 != 0 {
		return strconv.FormatInt(m, 10) + "M"
	}
	g := m / 1024
	if g%1024 != 0 {
		return strconv.FormatInt(g, 10) + "G"
	}
	return strconv.FormatInt(g/1024, 10) + "T"
}

var reSize = regexp.MustCompile(`^(\d+(?:\.\d+)?)([KMGT])?$`)

// parseSize reads a size string; a bare number is bytes (PVE::JSONSchema::parse_size).
func parseSize(s string) (int64, bool) {
	m := reSize.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	switch m[2] {
	case "K":
		f *= float64(kib)
	case "M":
		f *= float64(mib)
	case "G":
		f *= float64(gib)
	case "T":
		f *= float64(tib)
	}
	return int64(f), true
}

// gibToBytes converts the GiB number of a STORAGE:N allocation the way pve-container does:
// int(N*1024) MiB... expressed as KiB int(N*1024)*1024, here returned in bytes.
func gibToBytes(n float64) int64 {
	return int64(math.Floor(n*1024)) * 1024 * kib
}

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && !a.Is4In6() && a.Zone() == ""
}

func isCIDR(s string, family int) bool {
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(bits)
	if err != nil {
		return false
	}
	if family == 4 {
		return isIPv4(addr) && n > 7 && n <= 32
	}
	return isIPv6(addr) && n > 7 && n <= 128
}

// storage is one configured storage (storage.cfg entry).
type storage struct {
	ID      string   `json:"storage"`
	Type    string   `json:"type"` // dir, lvmthin, lvm, zfspool, rbd, nfs, cifs, cephfs, btrfs, pbs
	Content []string `json:"content"`
	Shared  bool     `json:"shared"`
	Total   int64    `json:"total"`
	Enabled bool     `json:"enabled"`
	// PruneBackups is the storage's prune-backups policy ("keep-last=3"; "" keeps all),
	// applied by a vzdump that does not say remove=0.
	PruneBackups string `json:"prune-backups,omitempty"`
}

func (st *storage) hasContent(c string) bool {
	for _, x := range st.Content {
		if x == c {
			return true
		}
	}
	return false
}

// pathBased reports whether the storage stores volumes as files below a directory.
func (st *storage) pathBased() bool {
	switch st.Type {
	case "dir", "nfs", "cifs", "cephfs", "btrfs", "glusterfs":
		return true
	}
	return false
}

// volume is one stored volume.
type volume struct {
	Storage   string `json:"storage"`
	Name      string `json:"volname"`
	Node      string `json:"node,omitempty"` // "" = visible on every node
	Size      int64  `json:"size"`
	Used      int64  `json:"used,omitempty"`
	Content   string `json:"content"`
	Format    string `json:"format"`
	Ctime     int64  `json:"ctime"`
	Notes     string `json:"notes,omitempty"`
	Protected bool   `json:"protected,omitempty"`
	// Config is the guest config stored inside a backup archive (made by vzdump).
	Config map[string]string `json:"-"`
	// Firewall is the guest's firewall options inside a backup archive; a restore makes them
	// the guest's, replacing what it had (docs/proxmox.md §9.3).
	Firewall map[string]string `json:"-"`
}

func (v *volume) volid() string { return v.Storage + ":" + v.Name }

// volInfo is the result of parsing a volume name the way the storage plugin does.
type volInfo struct {
	vtype   string // images, rootdir, iso, vztmpl, backup, snippets, import
	owner   int    // 0 = no owner
	isBase  bool
	format  string
	baseVol string // for linked clones: the base volume name
}

var (
	reDirImage   = regexp.MustCompile(`^(\d+)/(\S+\.(raw|qcow2|vmdk|subvol))$`)
	reDirLinked  = regexp.MustCompile(`^(\d+)/(\S+)/(\d+)/(\S+\.(raw|qcow2|vmdk))$`)
	reDirBackup  = regexp.MustCompile(`^backup/vzdump-(lxc|qemu|openvz)-(\d+)-.+\.(tgz|tar|tar\.(gz|lzo|zst|bz2|xz)|vma|vma\.(gz|lzo|zst))$`)
	reDirBackupX = regexp.MustCompile(`^backup/.+$`)
	reDirISO     = regexp.MustCompile(`^iso/[^/]+\.(?i:iso|img)$`)
	reDirTmpl    = regexp.MustCompile(`^vztmpl/[^/]+\.tar\.(gz|xz|zst|bz2)$|^vztmpl/[^/]+\.tar$`)
	reDirSnippet = regexp.MustCompile(`^snippets/[^/]+$`)
	reLVMThin    = regexp.MustCompile(`^((vm|base)-(\d+)-\S+)$`)
	reLVM        = regexp.MustCompile(`^(vm-(\d+)-\S+)$`)
	reZFS        = regexp.MustCompile(`^(((base|basevol)-(\d+)-\S+)/)?((base|basevol|vm|subvol)-(\d+)-\S+)$`)
	reRBD        = regexp.MustCompile(`^(((base)-(\d+)-\S+)/)?((base|vm)-(\d+)-\S+)$`)
	reDiskIndex  = regexp.MustCompile(`^(?:.*/)?(?:vm|base|subvol|basevol)-(\d+)-disk-(\d+)(?:\.\w+)?$`)
)

// parseVolname returns the owner and type of a volume name on a storage type, or an
// error worded like the plugin's parse_volname.
func parseVolname(stType, name string) (volInfo, error) {
	switch stType {
	case "dir", "nfs", "cifs", "cephfs", "btrfs", "glusterfs":
		if m := reDirLinked.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[3])
			return volInfo{vtype: "images", owner: owner, format: m[5], baseVol: m[2]}, nil
		}
		if m := reDirImage.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[1])
			base := strings.HasPrefix(m[2], "base-")
			return volInfo{vtype: "images", owner: owner, format: m[3], isBase: base}, nil
		}
		if m := reDirBackup.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[2])
			return volInfo{vtype: "backup", owner: owner, format: m[3]}, nil
		}
		if reDirBackupX.MatchString(name) {
			return volInfo{vtype: "backup"}, nil
		}
		if reDirISO.MatchString(name) {
			return volInfo{vtype: "iso", format: "iso"}, nil
		}
		if m := reDirTmpl.FindStringSubmatch(name); m != nil {
			return volInfo{vtype: "vztmpl", format: tmplFormat(name)}, nil
		}
		if reDirSnippet.MatchString(name) {
			return volInfo{vtype: "snippets", format: "snippet"}, nil
		}
		return volInfo{}, fmt.Errorf("unable to parse directory volume name '%s'", name)
	case "lvmthin":
		if m := reLVMThin.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[3])
			return volInfo{vtype: "images", owner: owner, format: "raw", isBase: m[2] == "base"}, nil
		}
		return volInfo{}, fmt.Errorf("unable to parse lvm volume name '%s'", name)
	case "lvm":
		if m := reLVM.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[2])
			return volInfo{vtype: "images", owner: owner, format: "raw"}, nil
		}
		return volInfo{}, fmt.Errorf("unable to parse lvm volume name '%s'", name)
	case "zfspool":
		if m := reZFS.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[7])
			fmtName := "raw"
			if m[6] == "subvol" || m[6] == "basevol" {
				fmtName = "subvol"
			}
			return volInfo{vtype: "images", owner: owner, format: fmtName, isBase: strings.HasPrefix(m[6], "base"), baseVol: m[2]}, nil
		}
		return volInfo{}, fmt.Errorf("unable to parse zfs volume name '%s'", name)
	case "rbd":
		if m := reRBD.FindStringSubmatch(name); m != nil {
			owner, _ := strconv.Atoi(m[7])
			return volInfo{vtype: "images", owner: owner, format: "raw", isBase: m[6] == "base", baseVol: m[2]}, nil
		}
		return volInfo{}, fmt.Errorf("unable to parse rbd volume name '%s'", name)
	}
	return volInfo{}, fmt.Errorf("unable to parse volume name '%s'", name)
}

// tmplFormat spells a container template's format the way storage content listings do.
func tmplFormat(name string) string {
	switch {
	case strings.HasSuffix(name, ".tar.zst"):
		return "tzst"
	case strings.HasSuffix(name, ".tar.gz"):
		return "tgz"
	case strings.HasSuffix(name, ".tar.xz"):
		return "txz"
	case strings.HasSuffix(name, ".tar.bz2"):
		return "tbz2"
	case strings.HasSuffix(name, ".tar"):
		return "tar"
	}
	return "raw"
}

// backupFormat gives the listed format of a backup archive name.
func backupFormat(name string) string {
	for _, ext := range []string{"tar.zst", "tar.gz", "tar.lzo", "tar.bz2", "tar.xz", "vma.zst", "vma.gz", "vma.lzo", "tgz", "tar", "vma"} {
		if strings.HasSuffix(name, "."+ext) {
			return ext
		}
	}
	return "raw"
}

// splitVolid splits "store:name". ok is false for absolute paths and bare values.
func splitVolid(v string) (store, name string, ok bool) {
	if strings.HasPrefix(v, "/") {
		return "", "", false
	}
	store, name, ok = strings.Cut(v, ":")
	if !ok || store == "" || name == "" || !reStorageID.MatchString(store) {
		return "", "", false
	}
	return store, name, true
}

// usedDiskIndexes returns the disk-N indexes taken on a storage for a vmid.
func usedDiskIndexes(names []string, vmid int) map[int]bool {
	used := map[int]bool{}
	for _, n := range names {
		m := reDiskIndex.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		if id, _ := strconv.Atoi(m[1]); id != vmid {
			continue
		}
		i, _ := strconv.Atoi(m[2])
		used[i] = true
	}
	return used
}

// newVolumeName chooses the name Proxmox would give a new disk of vmid on a storage type
// (pve-storage find_free_diskname and the plugins' alloc_image, pve-container alloc_disk).
func newVolumeName(st *storage, names []string, vmid int, forCT bool, sizeZero bool, format string) (string, string) {
	used := usedDiskIndexes(names, vmid)
	i := 0
	for used[i] {
		i++
	}
	switch {
	case st.pathBased():
		if forCT && sizeZero {
			return fmt.Sprintf("%d/subvol-%d-disk-%d.subvol", vmid, vmid, i), "subvol"
		}
		if format == "" {
			format = "raw"
		}
		return fmt.Sprintf("%d/vm-%d-disk-%d.%s", vmid, vmid, i, format), format
	case st.Type == "zfspool" && forCT:
		return fmt.Sprintf("subvol-%d-disk-%d", vmid, i), "subvol"
	default:
		return fmt.Sprintf("vm-%d-disk-%d", vmid, i), "raw"
	}
}

// parseMount classifies a rootfs/mpN value: its volume part, options and mount type.
type mountSpec struct {
	volume string
	opts   map[string]string
	order  []string
	kind   string // volume, bind, device
}

func parseMount(v string) mountSpec {
	ms := mountSpec{opts: map[string]string{}}
	for i, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if i == 0 && (!ok || k == "volume") {
			if ok {
				val = strings.TrimSpace(val)
				ms.volume = val
			} else {
				ms.volume = part
			}
			continue
		}
		if !ok {
			continue
		}
		ms.opts[k] = val
		ms.order = append(ms.order, k)
	}
	switch {
	case strings.HasPrefix(ms.volume, "/dev/"):
		ms.kind = "device"
	case strings.HasPrefix(ms.volume, "/"):
		ms.kind = "bind"
	default:
		ms.kind = "volume"
	}
	return ms
}

// String prints the mount the way print_property_string does: the volume first, then the
// required key mp, then the other keys sorted.
func (ms mountSpec) String() string {
	var b strings.Builder
	b.WriteString(ms.volume)
	if v, ok := ms.opts["mp"]; ok {
		b.WriteString(",mp=" + v)
	}
	keys := make([]string, 0, len(ms.opts))
	for k := range ms.opts {
		if k != "mp" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("," + k + "=" + ms.opts[k])
	}
	return b.String()
}

var reNewDisk = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):(\d+(?:\.\d+)?)$`)

// isMountKey reports whether a container config key holds a mount (rootfs, mpN).
func isMountKey(k string) bool {
	return k == "rootfs" || indexedKey(k, "mp")
}

func indexedKey(k, prefix string) bool {
	if !strings.HasPrefix(k, prefix) || len(k) == len(prefix) {
		return false
	}
	for _, r := range k[len(prefix):] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// qemuDiskKey reports whether a QEMU config key is a drive.
func qemuDiskKey(k string) bool {
	for _, p := range []string{"ide", "sata", "scsi", "virtio"} {
		if indexedKey(k, p) {
			return true
		}
	}
	return k == "efidisk0" || k == "tpmstate0"
}

// mountKeysInOrder returns rootfs, then mp0, mp1, ... present in conf, the order in
// which pve-container walks mount points (mountpoint_names).
func mountKeysInOrder(conf map[string]string) []string {
	var out []string
	if _, ok := conf["rootfs"]; ok {
		out = append(out, "rootfs")
	}
	var idx []int
	for k := range conf {
		if indexedKey(k, "mp") {
			n, _ := strconv.Atoi(k[2:])
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	for _, n := range idx {
		out = append(out, "mp"+strconv.Itoa(n))
	}
	return out
}

// unusedKeysInOrder returns unused0, unused1, ... present in conf, in numeric order.
func unusedKeysInOrder(conf map[string]string) []string {
	var idx []int
	for k := range conf {
		if indexedKey(k, "unused") {
			n, _ := strconv.Atoi(k[len("unused"):])
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	out := make([]string, 0, len(idx))
	for _, n := range idx {
		out = append(out, "unused"+strconv.Itoa(n))
	}
	return out
}
