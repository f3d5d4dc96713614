package reinstall

import (
	"context"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// Reader is a guest kind's side of a reinstall's reads, implemented in the kind's package beside
// its kinds.Reinstaller: it reads the guest (GET requests only) and labels what a reinstall
// would replace, in the kind's own vocabulary (R12: a container's rootfs and mount points, a
// VM's disks and boot disk).
type Reader interface {
	// ReadForReinstall reads the guest at g for a reinstall to plan p with os.
	ReadForReinstall(ctx context.Context, g kinds.Guest, p plans.Plan, os string) (Read, error)
	// Shape puts the labelled mounts and sizes of the facts into the kind's fields of a
	// preview.
	Shape(pv *Preview, f Facts)
}

// RestoreReader is a kind whose restore preview reads its guest differently from a
// reinstall's (a VM's drives come back from the archive, not from a template). A kind without
// it is read by ReadForReinstall for a restore too.
type RestoreReader interface {
	// ReadForRestore reads the guest at g for a restore of the archive that archive names
	// (looked up among the service's own backups when called, R42).
	ReadForRestore(ctx context.Context, g kinds.Guest, archive ArchiveOf) (Read, error)
}

// ArchiveOf gives a restore's archive: the volume id of the service's own backup it
// restores, or the problem of a backup that is not one of them.
type ArchiveOf func(ctx context.Context) (string, error)

// Read is what a kind read of its guest for a reinstall.
type Read struct {
	// Exists is false when no config is at the vmid (nothing else is read then).
	Exists bool
	// Stamped is false when the config does not carry the service's stamp (R39): nothing else
	// is read, and the reinstall refuses.
	Stamped   bool
	Protected bool
	Lock      string
	// Mounts are the labelled mounts or disks, active and pending.
	Mounts []Mount
	// RootKey names the mount whose size may only grow (the kind's name for it).
	RootKey string
	// NoRoot is set when the guest has no mount whose size may only grow (a VM without a
	// boot disk: the re-clone brings one, and there is none to shrink).
	NoRoot bool
}

// kindOf is the reinstall side of a guest kind: nil when the kind's module does not implement
// both halves (the kind does not offer reinstall). res is its restore side, nil when it has
// none (R43).
type kindOf struct {
	mod kinds.Module
	rep kinds.Reinstaller
	rd  Reader
	res kinds.Restorer
}

func (s *Replacer) kind(kind plans.GuestType) (kindOf, bool) {
	mod, ok := s.mods.Get(kind)
	if !ok {
		return kindOf{}, false
	}
	rep, ok := mod.(kinds.Reinstaller)
	if !ok {
		return kindOf{}, false
	}
	rd, ok := mod.(Reader)
	if !ok {
		return kindOf{}, false
	}
	res, _ := mod.(kinds.Restorer)
	return kindOf{mod: mod, rep: rep, rd: rd, res: res}, true
}
