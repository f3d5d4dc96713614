package pveconf

import (
	"strconv"
	"strings"
)

// Limits of the numbered mount keys (pve-container MAX_MOUNT_POINTS and
// MAX_UNUSED_DISKS).
const (
	MaxMountPoints = 256
	MaxUnused      = 256
)

// MountPoint is a parsed rootfs, mpN or unusedN config value (docs/proxmox.md
// §5.2).
type MountPoint struct {
	Key    string // rootfs, mp0..mp255, unused0..unused255
	Volume string // the volume part: a volume id, a host path, or STORAGE:GiB on create
	Path   string // the path inside the container: mp=, "/" for rootfs, "" for unusedN
	// Size is the raw size= text, "" when absent. SizeBytes and SizeKnown
	// are ParseConfigSize's reading of it; an absent or unparseable size is
	// not known.
	Size      string
	SizeBytes int64
	SizeKnown bool
	Backup    *bool // backup=, nil when absent (off for mpN, always on for rootfs)
	ReadOnly  bool  // ro=1
	// Options holds every other key=value in config order (acl,
	// mountoptions, quota, replicate, shared, keepattrs, and keys this
	// package does not know).
	Options []Option
}

// IsMountKey reports whether key names a container mount: rootfs,
// mp0..mp255 or unused0..unused255.
func IsMountKey(key string) bool {
	if key == "rootfs" {
		return true
	}
	if n, ok := strings.CutPrefix(key, "mp"); ok {
		return validIndex(n, MaxMountPoints)
	}
	if n, ok := strings.CutPrefix(key, "unused"); ok {
		return validIndex(n, MaxUnused)
	}
	return false
}

// validIndex accepts a canonical decimal below limit ("0", "17"; not "01").
func validIndex(s string, limit int) bool {
	if s == "" || len(s) > 3 || !allDigits(s) || (len(s) > 1 && s[0] == '0') {
		return false
	}
	n, _ := strconv.Atoi(s)
	return n < limit
}

// ParseMountPoint parses the value of a rootfs, mpN or unusedN key. The
// volume may be given bare or as volume=. mpN needs mp=; rootfs takes
// neither mp= nor backup=; unusedN is a volume and nothing else. The volume
// part itself is not checked here: ParseVolume classifies it.
func ParseMountPoint(key, value string) (MountPoint, error) {
	const what = "mount point"
	if !IsMountKey(key) {
		return MountPoint{}, syntaxErr(what, key, "not rootfs, mpN or unusedN")
	}
	parts, err := splitProps(what, value)
	if err != nil {
		return MountPoint{}, err
	}
	isRoot, isUnused := key == "rootfs", strings.HasPrefix(key, "unused")
	mp := MountPoint{Key: key}
	volSeen := false
	for _, p := range parts {
		if !p.keyed || p.key == "volume" {
			if volSeen {
				return MountPoint{}, syntaxErr(what, value, "volume given twice")
			}
			volSeen, mp.Volume = true, p.value
			continue
		}
		if isUnused {
			return MountPoint{}, syntaxErr(what, value, key+" takes only a volume, not "+quotePart(p.key))
		}
		if err := mp.setOption(value, p); err != nil {
			return MountPoint{}, err
		}
	}
	if !volSeen {
		return MountPoint{}, syntaxErr(what, value, "no volume")
	}
	switch {
	case isRoot:
		mp.Path = "/"
	case !isUnused && mp.Path == "":
		return MountPoint{}, syntaxErr(what, value, key+" has no mp=")
	}
	return mp, nil
}

// setOption reads one key=value of a rootfs or mpN value (input is the whole value, for
// errors).
func (mp *MountPoint) setOption(input string, p propPart) error {
	const what = "mount point"
	isRoot := mp.Key == "rootfs"
	switch p.key {
	case "mp":
		if isRoot {
			return syntaxErr(what, input, "rootfs takes no mp=")
		}
		mp.Path = p.value
	case "backup":
		if isRoot {
			return syntaxErr(what, input, "rootfs takes no backup=")
		}
		b, ok := parseBool(p.value)
		if !ok {
			return syntaxErr(what, input, "backup is not a boolean")
		}
		mp.Backup = &b
	case "ro":
		b, ok := parseBool(p.value)
		if !ok {
			return syntaxErr(what, input, "ro is not a boolean")
		}
		mp.ReadOnly = b
	case "size":
		mp.Size = p.value
		if b, known, err := ParseConfigSize(p.value); err == nil {
			mp.SizeBytes, mp.SizeKnown = b, known
		}
	default:
		mp.Options = append(mp.Options, Option{Key: p.key, Value: p.value})
	}
	return nil
}

// RootfsAlloc builds the rootfs value that allocates a new volume on
// create, STORAGE:GiB (R7): "local-lvm:8". It refuses an invalid
// storage id and a negative size; 0 asks a directory or ZFS storage for an
// unlimited subvolume.
func RootfsAlloc(storage string, gib int) (string, error) {
	if !ValidStorageID(storage) {
		return "", syntaxErr("storage id", storage, "not a Proxmox storage id")
	}
	if gib < 0 {
		return "", rangeErr("rootfs size", strconv.Itoa(gib), "negative")
	}
	return storage + ":" + strconv.Itoa(gib), nil
}

// FormatRootfsAlloc is RootfsAlloc for values already validated (the plan's
// storage and size are checked when the plan is saved); it panics on what
// RootfsAlloc refuses, like regexp.MustCompile. The package never builds a
// rootfs that names an existing volume.
func FormatRootfsAlloc(storage string, gib int) string {
	s, err := RootfsAlloc(storage, gib)
	if err != nil {
		panic("pveconf: FormatRootfsAlloc: " + err.Error())
	}
	return s
}

// ParseVolume classifies the mount point's volume part.
func (mp MountPoint) ParseVolume() (Volume, error) { return ParseVolume(mp.Volume) }
