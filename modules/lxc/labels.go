package lxc

import (
	"sort"
	"strconv"
	"strings"

	"pvebill/modules/pve/pveconf"
	"pvebill/modules/reinstall"
)

// A container's mounts as a reinstall labels them (R19–R21): the container's vocabulary —
// rootfs, mpN and unusedN — lives here; the reinstall package knows only labelled mounts.

// rootKey is the mount whose size may only grow across a reinstall (R23).
const rootKey = "rootfs"

// fateOf is a mount's fate: the create call sets only the root filesystem, so rootfs is
// recreated (new, empty, at the plan's size) and every other mount is removed.
func fateOf(key string) reinstall.MountFate {
	if key == rootKey {
		return reinstall.Recreated
	}
	return reinstall.Removed
}

// classify labels one rootfs, mpN or unusedN value of container vmid. Ownership is read from the
// volume id the way the storage plugins parse it (R21, pveconf.ParseVolume); destroy checks the
// name only, so a volume named for vmid is erased even if another guest has it attached, and one
// named for another guest is excluded even if only this guest used it. A value that cannot be
// parsed is Unknown. classify never returns Preserved.
func classify(vmid int, e reinstall.Entry) reinstall.Mount {
	m := reinstall.Mount{Key: e.Key, MountAfter: fateOf(e.Key), Pending: e.Pending, Data: reinstall.Unknown,
		Volume: reinstall.VolumePart(e.Value)}
	mp, err := pveconf.ParseMountPoint(e.Key, e.Value)
	if err != nil {
		return m
	}
	m.Volume, m.Path = mp.Volume, mp.Path
	if mp.SizeKnown {
		b := mp.SizeBytes
		m.SizeBytes = &b
	}
	vol, err := mp.ParseVolume()
	if err != nil {
		return m
	}
	reinstall.LabelVolume(&m, vol, vmid)
	return m
}

// classified labels every mount entry of a config (rootfs, mpN, unusedN; active and pending).
// Other keys are ignored. An entry whose pending value equals an active one of the same key is
// listed once. The result is sorted by key (rootfs first, then mpN, then unusedN, numerically),
// active before pending.
func classified(vmid int, entries []reinstall.Entry) []reinstall.Mount {
	var out []reinstall.Mount
	seen := map[[2]string]bool{}
	for _, e := range entries {
		if !pveconf.IsMountKey(e.Key) || e.Value == "" {
			continue
		}
		k := [2]string{e.Key, e.Value}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, classify(vmid, e))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := keyOrder(out[i].Key), keyOrder(out[j].Key)
		if a != b {
			return a < b
		}
		return !out[i].Pending && out[j].Pending
	})
	return out
}

// keyOrder sorts rootfs, mp0..mp255, unused0..unused255.
func keyOrder(key string) int {
	if key == rootKey {
		return 0
	}
	if n, ok := strings.CutPrefix(key, "mp"); ok {
		i, _ := strconv.Atoi(n)
		return 1 + i
	}
	n, _ := strings.CutPrefix(key, "unused")
	i, _ := strconv.Atoi(n)
	return 1 + pveconf.MaxMountPoints + i
}
