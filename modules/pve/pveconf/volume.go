package pveconf

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// VolumeKind says what a mount's volume part refers to.
type VolumeKind int

// Volume kinds, as pve-container's classify_mountpoint sorts them.
const (
	// VolumeStorage is a storage volume id STORE:NAME.
	VolumeStorage VolumeKind = iota + 1
	// VolumeBind is a host directory: an absolute path not under /dev/.
	VolumeBind
	// VolumeDevice is a host device: a path under /dev/.
	VolumeDevice
)

// Volume content types (the vtype of pve-storage's parse_volname).
const (
	VTypeImages   = "images"
	VTypeRootdir  = "rootdir"
	VTypeISO      = "iso"
	VTypeVZTmpl   = "vztmpl"
	VTypeBackup   = "backup"
	VTypeSnippets = "snippets"
	VTypeImport   = "import"
)

// Volume is a parsed volume id, or a bind or device path.
type Volume struct {
	ID   string     // the input
	Kind VolumeKind // storage volume, bind mount or device mount

	// For bind and device mounts only Name is set: the host path.

	Storage string // storage id, "local-lvm"
	VolName string // everything after "STORAGE:", "5001/vm-5001-disk-0.raw"
	// Name is the volume's own name as parse_volname returns it: the file
	// of a directory-style image ("vm-5001-disk-0.raw"), the last component
	// of a block volume ("vm-5001-disk-1" of "base-100-disk-0/vm-5001-disk-1"),
	// "ct/5001/2025-01-31T02:00:05Z" for a PBS backup.
	Name     string
	VType    string // VTypeImages, VTypeBackup, ...
	Format   string // raw, qcow2, vmdk, subvol, pbs-ct, ova+qcow2, ...
	Owner    int    // the owning vmid, when HasOwner
	HasOwner bool
	IsBase   bool   // a template's base volume (base-/basevol-)
	BaseName string // a linked clone's base volume, "" if none
	BaseVMID int    // the base volume's owner, when BaseName != ""
}

var (
	// pve-storage Plugin.pm parse_volname and parse_name_dir.
	dirCloneRe = regexp.MustCompile(`^(\d+)/(\S+)/(\d+)/(\S+)$`)
	dirImageRe = regexp.MustCompile(`^(\d+)/(\S+)$`)
	dirNameRe  = regexp.MustCompile(`^(base-)?[^/\s]+\.(raw|qcow2|vmdk|subvol)$`)
	isoRe      = regexp.MustCompile(`^iso/([^/]+\.(?i:iso|img))$`)
	vztmplRe   = regexp.MustCompile(`^vztmpl/([^/]+\.(?i:tar\.(?:gz|xz|zst|bz2)))$`)
	rootdirRe  = regexp.MustCompile(`^rootdir/(\d+)$`)
	backupRe   = regexp.MustCompile(`^backup/([^/]+\.(?:tgz|(?:tar|vma)(?:\.(?:gz|lzo|zst|bz2))?))$`)
	vzdumpRe   = regexp.MustCompile(`^vzdump-(?:openvz|lxc|qemu)-(\d+)-.+`)
	snippetsRe = regexp.MustCompile(`^snippets/([^/]+)$`)
	ovaRe      = regexp.MustCompile(`^import/([ a-zA-Z0-9\-.+=_]+\.ova/[ a-zA-Z0-9\-.+=_]+\.(qcow2|raw|vmdk))$`)
	importRe   = regexp.MustCompile(`^import/([ a-zA-Z0-9\-.+=_]+\.(ova|ovf|qcow2|raw|vmdk))$`)
	// PBSPlugin.pm parse_volname.
	pbsRe = regexp.MustCompile(`^backup/([^\s_]+)/([^\s_]+)/([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)$`)
	// The union of the block plugins that encode an owner: ZFSPoolPlugin
	// (base|basevol)-B-.../(vm|subvol|base|basevol)-N-..., RBDPlugin
	// base-B-.../(vm|base)-N-..., LvmThinPlugin (vm|base)-N-..., LVMPlugin
	// vm-N-....
	blockRe = regexp.MustCompile(`^(?:((?:base|basevol)-(\d+)-\S+)/)?((base|basevol|vm|subvol)-(\d+)-\S+)$`)
)

// ParseVolume parses a mount's volume part or an unusedN value: a bind or
// device path, or a storage volume id whose owner is read from its name as
// the storage plugins' parse_volname read it (R21, docs/proxmox.md
// §6.1). The package documentation lists the accepted shapes. Anything else
// is an error wrapping ErrSyntax (ErrRange for a vmid beyond int).
func ParseVolume(v string) (Volume, error) {
	if v == "" {
		return Volume{}, syntaxErr("volume", v, "empty")
	}
	if v[0] == '/' {
		kind := VolumeBind
		if strings.HasPrefix(v, "/dev/") {
			kind = VolumeDevice
		}
		return Volume{ID: v, Kind: kind, Name: v}, nil
	}
	// The plugins' regular expressions use \S; Go's \S is ASCII-only, so
	// refuse the other white space here rather than let \S match it.
	if strings.IndexFunc(v, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) >= 0 {
		return Volume{}, syntaxErr("volume", v, "contains white space")
	}
	store, name, found := strings.Cut(v, ":")
	if !found || !ValidStorageID(store) || name == "" {
		return Volume{}, syntaxErr("volume", v, "not STORAGE:NAME with a valid storage id")
	}
	vol := Volume{ID: v, Kind: VolumeStorage, Storage: store, VolName: name}
	var err error
	switch {
	case startsWithDirNumber(name):
		err = vol.parseDirImage(name)
	case strings.HasPrefix(name, "iso/"), strings.HasPrefix(name, "vztmpl/"),
		strings.HasPrefix(name, "backup/"), strings.HasPrefix(name, "snippets/"),
		strings.HasPrefix(name, "import/"), strings.HasPrefix(name, "rootdir/"):
		err = vol.parseDirContent(name)
	default:
		err = vol.parseBlock(name)
	}
	if err != nil {
		return Volume{}, err
	}
	return vol, nil
}

// startsWithDirNumber reports a leading \d+/ (a vmid directory).
func startsWithDirNumber(s string) bool {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '/'
}

// parseDirImage follows Plugin.pm: NNN/basefile/NNN/file for a linked clone
// (the owner is the third component), else NNN/file (the owner is NNN,
// whatever number the file name carries).
func (vol *Volume) parseDirImage(name string) error {
	if m := dirCloneRe.FindStringSubmatch(name); m != nil {
		if !dirNameRe.MatchString(m[2]) {
			return syntaxErr("volume", vol.ID, "base image "+quotePart(m[2])+" has no .raw, .qcow2, .vmdk or .subvol name")
		}
		base, err := parseVMID(vol.ID, m[1])
		if err != nil {
			return err
		}
		vol.BaseName, vol.BaseVMID = m[2], base
		return vol.setDirFile(m[3], m[4])
	}
	m := dirImageRe.FindStringSubmatch(name)
	if m == nil {
		return syntaxErr("volume", vol.ID, "not NNN/FILE")
	}
	return vol.setDirFile(m[1], m[2])
}

func (vol *Volume) setDirFile(vmid, file string) error {
	fm := dirNameRe.FindStringSubmatch(file)
	if fm == nil {
		return syntaxErr("volume", vol.ID, "image "+quotePart(file)+" has no .raw, .qcow2, .vmdk or .subvol name")
	}
	owner, err := parseVMID(vol.ID, vmid)
	if err != nil {
		return err
	}
	vol.VType, vol.Name, vol.Format = VTypeImages, file, fm[2]
	vol.Owner, vol.HasOwner, vol.IsBase = owner, true, fm[1] != ""
	return nil
}

// parseDirContent handles the other directory-style content types and PBS
// backups.
func (vol *Volume) parseDirContent(name string) error {
	if m := isoRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeISO, m[1], "raw"
		return nil
	}
	if m := vztmplRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeVZTmpl, m[1], "raw"
		return nil
	}
	if m := rootdirRe.FindStringSubmatch(name); m != nil {
		owner, err := parseVMID(vol.ID, m[1])
		if err != nil {
			return err
		}
		vol.VType, vol.Name, vol.Owner, vol.HasOwner = VTypeRootdir, m[1], owner, true
		return nil
	}
	if m := backupRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeBackup, m[1], "raw"
		if om := vzdumpRe.FindStringSubmatch(m[1]); om != nil {
			owner, err := parseVMID(vol.ID, om[1])
			if err != nil {
				return err
			}
			vol.Owner, vol.HasOwner = owner, true
		}
		return nil
	}
	if m := pbsRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeBackup, m[1]+"/"+m[2]+"/"+m[3], "pbs-"+m[1]
		if allDigits(m[2]) {
			owner, err := parseVMID(vol.ID, m[2])
			if err != nil {
				return err
			}
			vol.Owner, vol.HasOwner = owner, true
		}
		return nil
	}
	if m := snippetsRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeSnippets, m[1], "raw"
		return nil
	}
	if m := ovaRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeImport, m[1], "ova+"+m[2]
		return nil
	}
	if m := importRe.FindStringSubmatch(name); m != nil {
		vol.VType, vol.Name, vol.Format = VTypeImport, m[1], m[2]
		return nil
	}
	return syntaxErr("volume", vol.ID, "unknown directory content name")
}

// parseBlock handles LVM, LVM-thin, ZFS and RBD names.
func (vol *Volume) parseBlock(name string) error {
	m := blockRe.FindStringSubmatch(name)
	if m == nil {
		return syntaxErr("volume", vol.ID, "not a vm-, base- or subvol- volume name")
	}
	last, prefix := m[3], m[4]
	for _, ext := range []string{".raw", ".vmdk", ".subvol"} {
		if strings.HasSuffix(last, ext) {
			return syntaxErr("volume", vol.ID, "a block volume name with a file extension "+ext)
		}
	}
	owner, err := parseVMID(vol.ID, m[5])
	if err != nil {
		return err
	}
	if m[1] != "" {
		base, err := parseVMID(vol.ID, m[2])
		if err != nil {
			return err
		}
		vol.BaseName, vol.BaseVMID = m[1], base
	}
	vol.VType, vol.Name, vol.Owner, vol.HasOwner = VTypeImages, last, owner, true
	vol.IsBase = prefix == "base" || prefix == "basevol"
	switch {
	case prefix == "subvol" || prefix == "basevol":
		vol.Format = "subvol"
	case m[1] == "" && strings.HasSuffix(last, ".qcow2"):
		vol.Format = "qcow2" // LVM on PVE 9
	default:
		vol.Format = "raw"
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// parseVMID reads a \d+ owner; Proxmox compares owners numerically, so
// leading zeros do not matter.
func parseVMID(input, digits string) (int, error) {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || int64(int(n)) != n {
		return 0, rangeErr("volume", input, "vmid "+quotePart(digits)+" does not fit an int")
	}
	return int(n), nil
}
