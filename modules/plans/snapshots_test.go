package plans_test

import (
	"testing"

	"pvebill/i18n"
	"pvebill/modules/plans"
)

// R44: the snapshot capability follows the plan: off at snapshots_max 0 (permanent), refused
// permanently on a storage that cannot snapshot the guest type, temporarily while the storage
// type is not known, not yet available when no kind implements it.
func TestSnapshotCapability(t *testing.T) {
	spec := flexSpec()
	limit := 3
	spec.SnapshotsMax = &limit
	p, err := plans.Validate(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.SnapshotsMax != 3 {
		t.Fatalf("snapshots_max %d", p.SnapshotsMax)
	}
	built := plans.Built{plans.Container: {plans.CapSnapshot}, plans.VM: {plans.CapSnapshot}}
	want := func(storageType string, limit int, ct, vm plans.State) {
		t.Helper()
		q := p
		q.StorageType, q.SnapshotsMax = storageType, limit
		caps := plans.CapabilitiesOf(q, built)
		if got := caps[plans.Container][plans.CapSnapshot]; got != ct {
			t.Errorf("%s max %d container: %+v, want %+v", storageType, limit, got, ct)
		}
		if got := caps[plans.VM][plans.CapSnapshot]; got != vm {
			t.Errorf("%s max %d vm: %+v, want %+v", storageType, limit, got, vm)
		}
	}
	ok := plans.State{Available: true}
	cannot := plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonStorageCannotSnap}
	off := plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonSnapshotsOff}
	want("lvmthin", 3, ok, ok)
	want("zfspool", 3, ok, ok)
	want("rbd", 3, ok, ok)
	want("dir", 3, cannot, ok)
	want("nfs", 3, cannot, ok)
	want("lvm", 3, cannot, cannot)
	want("lvmthin", 0, off, off)
	unknown := plans.State{Refusal: i18n.Temporary, Reason: plans.ReasonStorageTypeNotKnown}
	want("", 3, unknown, unknown)
	if s := plans.CapabilitiesOf(p, nil)[plans.VM][plans.CapSnapshot]; s.Refusal != i18n.Temporary || s.Reason != plans.ReasonNotYetAvailable {
		t.Errorf("nothing built: %+v", s)
	}
	// A plan without snapshots_max has them off.
	p0, _ := plans.Validate(flexSpec(), nil)
	if p0.SnapshotsMax != 0 {
		t.Errorf("default snapshots_max %d", p0.SnapshotsMax)
	}
}
