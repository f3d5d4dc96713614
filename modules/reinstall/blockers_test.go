package reinstall

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/pve/pveconf"
)

const gib = pveconf.GiB

// rootfs is a container's root filesystem as its kind labels it, size= read as Proxmox writes it.
func rootfs(size string) []Mount {
	m := Mount{Key: "rootfs", Volume: "local-lvm:vm-5001-disk-0", Data: Erased, MountAfter: Recreated}
	if b, known, err := pveconf.ParseConfigSize(size); err == nil && known {
		m.SizeBytes = &b
	}
	return []Mount{m}
}

// clean is a container nothing blocks: 8 GiB rootfs, plan 8 GiB.
func clean() Facts {
	return Facts{Exists: true, PlannedBytes: 8 * gib, RootKey: "rootfs", Mounts: rootfs("8G")}
}

// setters make exactly one blocker fire on clean facts.
var setters = map[BlockerCode]func(*Facts){
	GuestMissing:           func(f *Facts) { f.Exists = false },
	ProtectionEnabled:      func(f *Facts) { f.Protected = true },
	ProxmoxLock:            func(f *Facts) { f.Lock = "backup" },
	BackupOrRestoreRunning: func(f *Facts) { f.OwnBackupOrRestore = true },
	ProtectedBackupExists:  func(f *Facts) { f.ProtectedBackup = true },
	RootfsWouldShrink: func(f *Facts) {
		f.Mounts = rootfs("8704M")
	},
	RootfsSizeUnknown: func(f *Facts) {
		f.Mounts = rootfs("8388608")
	},
	MountUnclassifiable: func(f *Facts) {
		f.Mounts = append(f.Mounts, Mount{Key: "mp0", Volume: "local-lvm:garbage", Data: Unknown, MountAfter: Removed})
	},
	ReinstallInProgress: func(f *Facts) { f.ReinstallInProgress = true },
}

func codes(bs []Blocker) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, string(b.Code))
	}
	return out
}

// R25: nine typed blockers; each fires alone, and any combination reports exactly its members
// (guest_missing hides what cannot be read without a guest).
func TestEachBlockerAlone(t *testing.T) {
	if len(BlockerCodes) != 9 || len(setters) != 9 {
		t.Fatalf("%d codes, %d setters", len(BlockerCodes), len(setters))
	}
	if got := Check(clean()); len(got) != 0 {
		t.Fatalf("clean facts blocked: %v", codes(got))
	}
	for _, code := range BlockerCodes {
		f := clean()
		setters[code](&f)
		got := codes(Check(f))
		if !reflect.DeepEqual(got, []string{string(code)}) {
			t.Errorf("%s alone: got %v", code, got)
		}
	}
}

func TestBlockerCombinations(t *testing.T) {
	// Every subset of the eight blockers that need a guest, and each with guest_missing.
	var others []BlockerCode
	for _, c := range BlockerCodes {
		if c != GuestMissing {
			others = append(others, c)
		}
	}
	for mask := 0; mask < 1<<len(others); mask++ {
		f := clean()
		var want []string
		for i, c := range others {
			if mask&(1<<i) != 0 {
				// Shrink and unknown size are two readings of one rootfs: not together.
				if c == RootfsSizeUnknown && mask&(1<<indexOf(others, RootfsWouldShrink)) != 0 {
					continue
				}
				setters[c](&f)
				want = append(want, string(c))
			}
		}
		got := codes(Check(f))
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("mask %b: got %v, want %v", mask, got, want)
		}
		f.Exists = false
		got = codes(Check(f))
		if got[0] != string(GuestMissing) {
			t.Fatalf("mask %b without guest: %v", mask, got)
		}
		for _, c := range got[1:] {
			if c != string(BackupOrRestoreRunning) && c != string(ReinstallInProgress) {
				t.Fatalf("mask %b without guest reports %s", mask, c)
			}
		}
	}
}

func indexOf(list []BlockerCode, c BlockerCode) int {
	for i, x := range list {
		if x == c {
			return i
		}
	}
	return -1
}

// R23: compared in bytes, shown in GiB rounded up.
func TestGrowOnly(t *testing.T) {
	cases := []struct {
		size    string
		planGiB int64
		blocked BlockerCode
		current string
	}{
		{"8704M", 8, RootfsWouldShrink, "9 GiB"}, // 8.5 GiB: "9 GiB" > "8 GiB"
		{"16G", 8, RootfsWouldShrink, "16 GiB"},
		{"8G", 8, "", ""},
		{"8704M", 9, "", ""},
		{"8G", 20, "", ""},
		{"8589934593", 8, RootfsWouldShrink, "9 GiB"}, // one byte over, bare bytes
		{"8388608", 8, RootfsSizeUnknown, ""},         // a bare KiB multiple: unknown, never 8 MiB
		{"8388608K", 8, "", ""},
	}
	for _, c := range cases {
		f := clean()
		f.PlannedBytes = c.planGiB * gib
		f.Mounts = rootfs(c.size)
		got := Check(f)
		if c.blocked == "" {
			if len(got) != 0 {
				t.Errorf("%s vs %d GiB: blocked %v", c.size, c.planGiB, codes(got))
			}
			continue
		}
		if len(got) != 1 || got[0].Code != c.blocked {
			t.Errorf("%s vs %d GiB: %v, want %s", c.size, c.planGiB, codes(got), c.blocked)
			continue
		}
		if c.blocked == RootfsWouldShrink {
			msg := got[0].Message("en")
			if !strings.Contains(msg, "("+c.current+")") || got[0].Params["planned"] != strings.TrimSpace(pveconf.DisplayGiBUp(c.planGiB*gib)) {
				t.Errorf("%s vs %d GiB: %q %v", c.size, c.planGiB, msg, got[0].Params)
			}
		}
	}
	// No rootfs at all: never a zero size.
	f := clean()
	f.Mounts = nil
	if got := codes(Check(f)); strings.Join(got, ",") != "rootfs_size_unknown,mount_unclassifiable" {
		t.Errorf("no rootfs: %v", got)
	}
}

// R25: every blocker has its own phrase in each of the nine languages, with its parameters
// filled, and the problem carries them.
func TestBlockerPhrases(t *testing.T) {
	for _, code := range BlockerCodes {
		f := clean()
		setters[code](&f)
		bs := Check(f)
		p := Blocked(bs)
		if p.Code != i18n.CodeBlocked || p.Status != 409 || len(p.Blockers) != 1 {
			t.Fatalf("%s: problem %+v", code, p)
		}
		seen := map[string]string{}
		for _, lang := range i18n.Languages {
			key := "blocker." + string(code)
			if _, ok := i18n.Lookup(lang, key); !ok {
				t.Errorf("%s: %s missing", lang, key)
			}
			msg := bs[0].Message(lang)
			if msg == "" || msg == key || strings.Contains(msg, "{") {
				t.Errorf("%s %s: %q", lang, code, msg)
			}
			for l, other := range seen {
				if other == msg {
					t.Errorf("%s %s: same phrase as %s", lang, code, l)
				}
			}
			seen[lang] = msg
		}
		if code == ProxmoxLock && !strings.Contains(bs[0].Message("de"), "backup") {
			t.Errorf("proxmox_lock does not name the lock: %q", bs[0].Message("de"))
		}
	}
}

// R22: confirmations are {key, volume} only, compared as a multiset.
func TestConfirmations(t *testing.T) {
	ms := append(rootfs("8G"), Mount{Key: "mp0", Volume: "/srv/shared", Path: "/mnt/shared", Data: Untouched, MountAfter: Removed})
	cs := Confirmations(ms)
	raw, _ := json.Marshal(cs)
	if string(raw) != `[{"key":"rootfs","volume":"local-lvm:vm-5001-disk-0"},{"key":"mp0","volume":"/srv/shared"}]` {
		t.Fatalf("confirmations %s", raw)
	}
	rev := []Confirmation{cs[1], cs[0]}
	if !SameConfirmations(cs, rev) {
		t.Error("order matters")
	}
	added := append(append([]Confirmation{}, cs...), Confirmation{Key: "mp1", Volume: "local-lvm:vm-5001-disk-1"})
	swapped := []Confirmation{cs[0], {Key: "mp0", Volume: "/srv/other"}}
	dup := []Confirmation{cs[0], cs[0]}
	for name, other := range map[string][]Confirmation{"added": added, "removed": cs[:1], "swapped": swapped, "dup": dup} {
		if SameConfirmations(cs, other) || SameConfirmations(other, cs) {
			t.Errorf("%s: reported the same", name)
		}
	}
}

// R24, R25: a guest without a mount whose size may only grow (NoRoot: a VM without a boot disk)
// raises no size blocker and no mount_unclassifiable for the missing key, but still one for each
// disk labelled unknown; a container without its rootfs, which NoRoot never describes, still
// raises both.
func TestNoRootRelaxesOnlyTheMissingRoot(t *testing.T) {
	efi := Mount{Key: "efidisk0", Volume: "local-lvm:vm-5001-disk-1", Data: Erased, MountAfter: Removed}
	vm := Facts{Exists: true, PlannedBytes: 8 * gib, RootKey: "", NoRoot: true, Mounts: []Mount{efi}}
	if got := codes(Check(vm)); len(got) != 0 {
		t.Errorf("VM without a boot disk blocked: %v", got)
	}
	vm.Mounts = append(vm.Mounts, Mount{Key: "tpmstate0", Volume: "local-lvm:", Data: Unknown, MountAfter: Removed})
	got := Check(vm)
	if len(got) != 1 || got[0].Code != MountUnclassifiable || got[0].Params["key"] != "tpmstate0" {
		t.Errorf("VM with an unknown disk: %v", got)
	}
	ct := Facts{Exists: true, PlannedBytes: 8 * gib, RootKey: "rootfs"}
	if got := strings.Join(codes(Check(ct)), " "); got != "rootfs_size_unknown mount_unclassifiable" {
		t.Errorf("container without rootfs: %q", got)
	}
}
