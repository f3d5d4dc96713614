package kinds_test

import (
	"slices"
	"testing"

	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/qemu"
)

// R39, R46: only the exact stamp line of the service — its client and its id — counts; a
// prefix of another id, another client's line, an edited line or a missing line do not. The
// one-part line of earlier versions counts for a service marked as existing before ids became
// per client, and for no other.
func TestHasStamp(t *testing.T) {
	g := kinds.Guest{ClientID: "alice", ServiceID: "whmcs-1"}
	legacy := kinds.Guest{ClientID: "alice", ServiceID: "whmcs-1", LegacyStamp: true}
	cases := []struct {
		desc      string
		want      bool
		wantOldSv bool // with g.LegacyStamp
	}{
		{kinds.StampDescription(g), true, true},
		{"notes\npvebill-service: alice/whmcs-1\n", true, true},
		{"pvebill-service: bob/whmcs-1", false, false},
		{"pvebill-service: alice/whmcs-10", false, false},
		{"pvebill-service: whmcs-1", false, true},
		{"notes\npvebill-service: whmcs-1\n", false, true},
		{"pvebill-service: whmcs-10", false, false},
		{"pvebill-service: whmcs-", false, false},
		{"# pvebill-service: whmcs-1 (copied)", false, false},
		{"", false, false},
	}
	for _, c := range cases {
		if got := kinds.HasStamp(c.desc, g); got != c.want {
			t.Errorf("HasStamp(%q) = %v, want %v", c.desc, got, c.want)
		}
		if got := kinds.HasStamp(c.desc, legacy); got != c.wantOldSv {
			t.Errorf("HasStamp(%q) of a service from before the migration = %v, want %v", c.desc, got, c.wantOldSv)
		}
	}
	if got := kinds.StampLine(g); got != "pvebill-service: alice/whmcs-1" {
		t.Errorf("StampLine = %q", got)
	}
	if got := kinds.StampTags("web;Prod"); got != "prod;pvebill;web" {
		t.Errorf("StampTags = %q", got)
	}
}

func TestRootDiskSize(t *testing.T) {
	cases := map[[2]string]int64{
		{"rootfs", "local-lvm:vm-100-disk-0,size=8G"}:                      8 << 30,
		{"rootfs", "local-lvm:vm-100-disk-0"}:                              0,
		{"scsi0", "local-lvm:vm-101-disk-0,iothread=1,size=10G"}:           10 << 30,
		{"scsi0", "local-lvm:vm-101-disk-0,size=8704M,discard=on"}:         8704 << 20,
		{"rootfs", "local-lvm:vm-100-disk-0,size=1048576"}:                 0, // bare multiple of 1024: not known (R24)
		{"virtio0", "local-zfs:vm-102-disk-0,format=raw,size=34359738368"}: 0,
	}
	for in, want := range cases {
		if got := kinds.RootDiskSize(in[0], in[1]); got != want {
			t.Errorf("RootDiskSize(%s, %s) = %d, want %d", in[0], in[1], got, want)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := kinds.NewRegistry(lxc.New(), qemu.New())
	if m, ok := r.Get(plans.Container); !ok || m.Kind() != plans.Container {
		t.Fatal("no container module")
	}
	built := r.Built()
	if len(built[plans.Container]) == 0 || len(built[plans.VM]) == 0 {
		t.Fatalf("built %v", built)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate kind did not panic")
		}
	}()
	kinds.NewRegistry(lxc.New(), lxc.New())
}

// The capability list is computed from what a module implements: reinstall from the
// Reinstaller interface, usage and the rest from the module's own list; nothing built reads as
// not built, and a kind without the interface does not claim it.
func TestBuiltComputedFromModules(t *testing.T) {
	r := kinds.NewRegistry(lxc.New(), qemu.New())
	built := r.Built()
	for _, k := range []plans.GuestType{plans.Container, plans.VM} {
		for _, c := range []plans.Capability{plans.CapCreate, plans.CapReinstall, plans.CapUsage, plans.CapMonitoring} {
			if !slices.Contains(built[k], c) {
				t.Errorf("%s: %s not listed in %v", k, c, built[k])
			}
		}
		m, _ := r.Get(k)
		if _, ok := m.(kinds.Reinstaller); !ok {
			t.Errorf("%s module is no Reinstaller", k)
		}
	}
	bare := kinds.NewRegistry(createOnly{lxc.New()}).Built()
	if slices.Contains(bare[plans.Container], plans.CapReinstall) {
		t.Errorf("a module without Reinstaller lists reinstall: %v", bare)
	}
	p := plans.Plan{GuestTypes: []plans.GuestType{plans.Container, plans.VM}}
	for k, set := range plans.CapabilitiesOf(p, built) {
		if !set[plans.CapUsage].Available || !set[plans.CapReinstall].Available {
			t.Errorf("%s: usage %v, reinstall %v", k, set[plans.CapUsage], set[plans.CapReinstall])
		}
	}
	if r.KindOf("lxc") != plans.Container || r.KindOf("qemu") != plans.VM || r.KindOf("node") != "" {
		t.Error("KindOf does not map the listing's row types to the kinds")
	}
}

// createOnly is a module with none of the optional interfaces: only Module's methods.
type createOnly struct{ kinds.Module }

// The power actions are listed exactly for a kind that implements PowerController (R40): both
// built kinds do, and a module without it claims none of the four.
func TestPowerCapabilitiesComputed(t *testing.T) {
	built := kinds.NewRegistry(lxc.New(), qemu.New()).Built()
	p := plans.Plan{GuestTypes: []plans.GuestType{plans.Container, plans.VM}}
	sets := plans.CapabilitiesOf(p, built)
	bare := kinds.NewRegistry(createOnly{lxc.New()}).Built()
	for _, c := range plans.PowerCapabilities {
		for _, k := range []plans.GuestType{plans.Container, plans.VM} {
			if !sets[k][c].Available {
				t.Errorf("%s: %s %+v, want available", k, c, sets[k][c])
			}
		}
		if slices.Contains(bare[plans.Container], c) {
			t.Errorf("a module without PowerController lists %s", c)
		}
	}
	if len(plans.PowerCapabilities) != 4 {
		t.Errorf("power capabilities %v", plans.PowerCapabilities)
	}
}
