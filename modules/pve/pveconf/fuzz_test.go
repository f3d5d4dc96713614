package pveconf

import (
	"errors"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// refSizeRe and refScale are an independent, arbitrary-precision reading of
// parse_size, used to check the fast one.
var (
	refSizeRe = regexp.MustCompile(`^(\d+(?:\.\d+)?)(K|M|G|T|KiB|MiB|GiB|TiB)?$`)
	refShift  = map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}
)

// refScale returns floor(num * 2^shift) and whether it fits an int64.
func refScale(num string, shift uint) (int64, bool) {
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		panic("reference cannot read " + num)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

func FuzzParseSize(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSize(s)
		if err == nil && got < 0 {
			t.Fatalf("ParseSize(%q) = %d without error", s, got)
		}
		m := refSizeRe.FindStringSubmatch(s)
		if m == nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseSize(%q) = %d, %v; want a syntax error", s, got, err)
			}
			return
		}
		want, fits := refScale(m[1], refShift[m[2]])
		switch {
		case !fits && !errors.Is(err, ErrRange):
			t.Fatalf("ParseSize(%q) = %d, %v; want a range error", s, got, err)
		case fits && (err != nil || got != want):
			t.Fatalf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	})
}

func FuzzParseConfigSize(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		b, known, err := ParseConfigSize(s)
		pb, perr := ParseSize(s)
		if (err == nil) != (perr == nil) || (err == nil && b != pb) {
			t.Fatalf("ParseConfigSize(%q) = %d, %v; ParseSize = %d, %v", s, b, err, pb, perr)
		}
		if err != nil {
			if known {
				t.Fatalf("ParseConfigSize(%q) known with error %v", s, err)
			}
			return
		}
		bare := s[len(s)-1] >= '0' && s[len(s)-1] <= '9'
		wantKnown := !bare || (!strings.Contains(s, ".") && (b == 0 || b%KiB != 0))
		if known != wantKnown {
			t.Fatalf("ParseConfigSize(%q) known = %v; want %v", s, known, wantKnown)
		}
	})
}

func FuzzGiBUp(f *testing.F) {
	f.Fuzz(func(t *testing.T, b int64) {
		if b < 0 {
			return
		}
		// GiBUp is the least q with q GiB >= b.
		if q := GiBUp(b); (b == 0 && q != 0) || (b > 0 && (b-(q-1)*GiB <= 0 || b-(q-1)*GiB > GiB)) {
			t.Fatalf("GiBUp(%d) = %d is not the rounded-up GiB", b, q)
		}
	})
}

func FuzzParseVolume(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVolume(s)
		if strings.HasPrefix(s, "/") {
			want := VolumeBind
			if strings.HasPrefix(s, "/dev/") {
				want = VolumeDevice
			}
			if err != nil || v.Kind != want || v.Name != s || v.HasOwner {
				t.Fatalf("ParseVolume(%q) = %+v, %v; want a %v mount", s, v, err, want)
			}
			return
		}
		owned, oerr := VolumeOwnedBy(s, v.Owner)
		if err != nil {
			if v != (Volume{}) || oerr == nil || owned {
				t.Fatalf("ParseVolume(%q) = %+v, %v; VolumeOwnedBy = %v, %v", s, v, err, owned, oerr)
			}
			return
		}
		if v.Kind != VolumeStorage || v.ID != s || v.Storage+":"+v.VolName != s || !ValidStorageID(v.Storage) {
			t.Fatalf("ParseVolume(%q) = %+v: parts do not make up the id", s, v)
		}
		if v.VType == "" || v.Name == "" || !strings.Contains(v.VolName, v.Name) {
			t.Fatalf("ParseVolume(%q) = %+v: missing type or name", s, v)
		}
		if v.HasOwner != (oerr == nil && owned) || v.Owner < 0 || (!v.HasOwner && v.Owner != 0) {
			t.Fatalf("ParseVolume(%q) = %+v; VolumeOwnedBy(owner) = %v, %v", s, v, owned, oerr)
		}
		if v.HasOwner {
			if other, _ := VolumeOwnedBy(s, v.Owner+1); other {
				t.Fatalf("VolumeOwnedBy(%q, %d) = true; owner is %d", s, v.Owner+1, v.Owner)
			}
		}
		if strings.IndexFunc(s, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) >= 0 {
			t.Fatalf("ParseVolume(%q) accepted white space", s)
		}
	})
}

func FuzzVolumeOwnership(f *testing.F) {
	f.Fuzz(func(t *testing.T, n, m uint32, k uint16) {
		cases := []struct {
			volid       string
			owner, base int
		}{
			{"local-lvm:vm-" + itoa(n) + "-disk-" + itoa(k), int(n), -1},
			{"local-lvm:base-" + itoa(n) + "-disk-" + itoa(k), int(n), -1},
			{"local-zfs:subvol-" + itoa(n) + "-disk-" + itoa(k), int(n), -1},
			{"local-lvm:vm-" + itoa(n) + "-cloudinit", int(n), -1},
			{"local:" + itoa(n) + "/vm-" + itoa(m) + "-disk-" + itoa(k) + ".raw", int(n), -1},
			{"local-zfs:base-" + itoa(m) + "-disk-0/vm-" + itoa(n) + "-disk-" + itoa(k), int(n), int(m)},
			{"ceph:base-" + itoa(m) + "-disk-0/vm-" + itoa(n) + "-disk-" + itoa(k), int(n), int(m)},
			{"local:" + itoa(m) + "/base-" + itoa(m) + "-disk-0.raw/" + itoa(n) + "/vm-" + itoa(n) + "-disk-" + itoa(k) + ".qcow2", int(n), int(m)},
			{"local:backup/vzdump-lxc-" + itoa(n) + "-2025_01_31-02_00_05.tar.zst", int(n), -1},
			{"pbs:backup/ct/" + itoa(n) + "/2025-01-31T02:00:05Z", int(n), -1},
		}
		for _, c := range cases {
			v, err := ParseVolume(c.volid)
			if err != nil || !v.HasOwner || v.Owner != c.owner {
				t.Fatalf("ParseVolume(%q) = %+v, %v; want owner %d", c.volid, v, err, c.owner)
			}
			if c.base >= 0 && (v.BaseName == "" || v.BaseVMID != c.base) {
				t.Fatalf("ParseVolume(%q) = %+v; want base %d", c.volid, v, c.base)
			}
			if owned, err := VolumeOwnedBy(c.volid, c.owner); !owned || err != nil {
				t.Fatalf("VolumeOwnedBy(%q, %d) = %v, %v", c.volid, c.owner, owned, err)
			}
			if owned, _ := VolumeOwnedBy(c.volid, c.owner+1); owned {
				t.Fatalf("VolumeOwnedBy(%q, %d) = true", c.volid, c.owner+1)
			}
		}
	})
}

func itoa[T uint16 | uint32](v T) string { return strconv.FormatUint(uint64(v), 10) }

func FuzzParseMountPoint(f *testing.F) {
	f.Fuzz(func(t *testing.T, key, value string) {
		mp, err := ParseMountPoint(key, value)
		if err != nil {
			if !reflect.DeepEqual(mp, MountPoint{}) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseMountPoint(%q, %q) = %+v, %v", key, value, mp, err)
			}
			return
		}
		if !IsMountKey(key) || mp.Key != key || mp.Volume == "" || strings.Contains(mp.Volume, ",") {
			t.Fatalf("ParseMountPoint(%q, %q) = %+v", key, value, mp)
		}
		switch {
		case key == "rootfs" && (mp.Path != "/" || mp.Backup != nil):
			t.Fatalf("rootfs %q = %+v", value, mp)
		case strings.HasPrefix(key, "mp") && mp.Path == "":
			t.Fatalf("%s %q has no path", key, value)
		case strings.HasPrefix(key, "unused") && (mp.Path != "" || mp.Size != "" || len(mp.Options) > 0 || mp.ReadOnly || mp.Backup != nil):
			t.Fatalf("%s %q = %+v", key, value, mp)
		}
		b, known, serr := ParseConfigSize(mp.Size)
		if mp.SizeKnown != (serr == nil && known) || (serr == nil && mp.SizeBytes != b) || (serr != nil && mp.SizeBytes != 0) {
			t.Fatalf("ParseMountPoint(%q, %q) size %q = %d, %v; ParseConfigSize = %d, %v, %v",
				key, value, mp.Size, mp.SizeBytes, mp.SizeKnown, b, known, serr)
		}
		for _, o := range mp.Options {
			if slices.Contains([]string{"volume", "mp", "size", "backup", "ro"}, o.Key) || o.Value == "" {
				t.Fatalf("ParseMountPoint(%q, %q): option %+v", key, value, o)
			}
		}
	})
}

func FuzzParseNet(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNet(s)
		if err != nil {
			return
		}
		if n.Tag < 0 || n.Tag > 4094 || n.MTU < 0 || n.MTU > 65535 || n.Rate < 0 {
			t.Fatalf("ParseNet(%q) = %+v: out of range", s, n)
		}
	})
}

func FuzzParseUPID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUPID(s)
		if err != nil {
			if u != (UPID{}) {
				t.Fatalf("ParseUPID(%q) = %+v with error", s, u)
			}
			return
		}
		if !strings.HasPrefix(s, "UPID:"+u.Node+":") || !strings.HasSuffix(s, ":"+u.Type+":"+u.ID+":"+u.User+":") {
			t.Fatalf("ParseUPID(%q) = %+v: fields are not the input's", s, u)
		}
		back, err := ParseUPID(u.String())
		if err != nil || back != u {
			t.Fatalf("ParseUPID(%q.String() = %q) = %+v, %v", s, u.String(), back, err)
		}
		if u.PID < 0 || u.PID > 0xFFFFFFFF || u.PStart < 0 || u.PStart > 0xFFFFFFFFF || u.StartTime.Location().String() != "UTC" {
			t.Fatalf("ParseUPID(%q) = %+v", s, u)
		}
	})
}

func FuzzNormalizeTags(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		tags := NormalizeTags(s)
		if !slices.IsSorted(tags) || len(slices.Compact(slices.Clone(tags))) != len(tags) {
			t.Fatalf("NormalizeTags(%q) = %q: not sorted and unique", s, tags)
		}
		for _, tag := range tags {
			if tag == "" || strings.ContainsAny(tag, ";,") || strings.IndexFunc(tag, unicode.IsSpace) >= 0 || strings.ToLower(tag) != tag {
				t.Fatalf("NormalizeTags(%q) = %q: bad tag %q", s, tags, tag)
			}
		}
		joined := JoinTags(tags)
		if again := NormalizeTags(joined); !slices.Equal(again, tags) {
			t.Fatalf("NormalizeTags(JoinTags(%q)) = %q", tags, again)
		}
		if JoinTags([]string{s}) != joined {
			t.Fatalf("JoinTags([%q]) = %q; want %q", s, JoinTags([]string{s}), joined)
		}
	})
}
