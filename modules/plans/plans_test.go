package plans_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/plans"
)

// containerSpec is a valid container-only plan; tests change one thing at a time.
func containerSpec() plans.Spec {
	return plans.Spec{
		Code: "ct-test", Name: "Container test", GuestTypes: []plans.GuestType{plans.Container},
		Cluster: "default", Cores: new(2), MemoryMiB: new(2048), DiskGiB: new(20),
		Storage: "local-lvm", Bridge: "vmbr0",
		OS: plans.OSCatalog{Container: map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}},
	}
}

func vmSpec() plans.Spec {
	s := containerSpec()
	s.Code, s.GuestTypes = "vm-test", []plans.GuestType{plans.VM}
	s.OS = plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}
	return s
}

func flexSpec() plans.Spec {
	s := containerSpec()
	s.Code, s.GuestTypes = "flex-test", []plans.GuestType{plans.VM, plans.Container}
	s.OS.VM = map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}
	return s
}

func problemOf(t *testing.T, err error) *i18n.Problem {
	t.Helper()
	var p *i18n.Problem
	if !errors.As(err, &p) {
		t.Fatalf("error %v is not a Problem", err)
	}
	return p
}

func TestExamplePlans(t *testing.T) {
	specs := plans.Examples()
	got := map[string]plans.Plan{}
	for _, s := range specs {
		p, err := plans.Validate(s, plans.Clusters{"default": nil})
		if err != nil {
			t.Fatalf("example %s: %v", s.Code, err)
		}
		got[p.Code] = p
	}
	ct, vm, flex := got["ct-2g"], got["vm-4g"], got["flex-2g"]
	if len(got) != 3 || ct.Code == "" || vm.Code == "" || flex.Code == "" {
		t.Fatalf("examples: %v", got)
	}
	if !ct.Offers(plans.Container) || ct.Offers(plans.VM) {
		t.Errorf("ct-2g offers %v", ct.GuestTypes)
	}
	if ct.OS.Container["debian-12"] != "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst" ||
		ct.OS.Container["ubuntu-24.04"] != "local:vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst" ||
		ct.Storage != "local-lvm" || ct.Bridge != "vmbr0" {
		t.Errorf("ct-2g: %+v", ct)
	}
	if vm.Offers(plans.Container) || !vm.Offers(plans.VM) || vm.OS.VM["debian-12"] != (plans.VMTemplate{VMID: 9000}) {
		t.Errorf("vm-4g: %+v", vm)
	}
	if !flex.Offers(plans.Container) || !flex.Offers(plans.VM) {
		t.Errorf("flex-2g offers %v", flex.GuestTypes)
	}
	if !flex.HasBackups() || flex.BackupStorage != "local" || flex.BackupsMax != 3 || flex.BackupMode != plans.BackupSnapshot ||
		flex.BackupsOnTerminate != plans.BackupsDelete || ct.HasBackups() {
		t.Errorf("backups: flex-2g %+v, ct-2g %+v", flex, ct)
	}
	if flex.SwapMiB != 0 {
		t.Errorf("flex-2g has no swap in the file but %d MiB", flex.SwapMiB)
	}
}

// R4: one offered type is the type; two need a choice; there is no default under a choice.
func TestChooseGuestType(t *testing.T) {
	ct, _ := plans.Validate(containerSpec(), nil)
	flex, _ := plans.Validate(flexSpec(), nil)
	vm, _ := plans.Validate(vmSpec(), nil)

	if g, err := ct.ChooseGuestType(""); err != nil || g != plans.Container {
		t.Errorf("container plan, no choice: %v %v", g, err)
	}
	if g, err := vm.ChooseGuestType(""); err != nil || g != plans.VM {
		t.Errorf("vm plan, no choice: %v %v", g, err)
	}
	if _, err := flex.ChooseGuestType(""); problemOf(t, err).Code != i18n.CodeGuestTypeRequired {
		t.Errorf("flex plan without a choice: %v", err)
	}
	for _, g := range []plans.GuestType{plans.Container, plans.VM} {
		if got, err := flex.ChooseGuestType(string(g)); err != nil || got != g {
			t.Errorf("flex plan, %s: %v %v", g, got, err)
		}
	}
	p := problemOf(t, func() error { _, err := ct.ChooseGuestType("vm"); return err }())
	if p.Code != i18n.CodeGuestTypeNotOffered || p.Status != 422 || p.Params["guest_type"] != "vm" {
		t.Errorf("vm on a container plan: %+v", p)
	}
	if _, err := vm.ChooseGuestType("lxc"); problemOf(t, err).Code != i18n.CodeGuestTypeNotOffered {
		t.Errorf("lxc: %v", err)
	}

	if v, err := flex.ContainerTemplate("debian-12"); err != nil || !strings.Contains(v, "vztmpl/debian-12") {
		t.Errorf("container template: %q %v", v, err)
	}
	if id, err := flex.VMTemplate("debian-12"); err != nil || id.VMID != 9000 {
		t.Errorf("vm template: %v %v", id, err)
	}
	if _, err := ct.VMTemplate("debian-12"); problemOf(t, err).Code != i18n.CodeOSNotOffered {
		t.Errorf("vm template of a container plan: %v", err)
	}
	if _, err := flex.ContainerTemplate("arch"); problemOf(t, err).Code != i18n.CodeOSNotOffered {
		t.Errorf("unknown os: %v", err)
	}
}

// R5: a plan without swap is stored and answered as 0, explicitly; an explicit 0 stays 0.
func TestSwapAbsentIsZero(t *testing.T) {
	p, err := plans.Validate(containerSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	if p.SwapMiB != 0 || !strings.Contains(string(raw), `"swap_mib":0`) {
		t.Fatalf("swap %d, json %s", p.SwapMiB, raw)
	}
	s := containerSpec()
	s.SwapMiB = new(512)
	if p, _ = plans.Validate(s, nil); p.SwapMiB != 512 {
		t.Fatalf("swap 512 became %d", p.SwapMiB)
	}
	s.SwapMiB = new(0)
	if p, _ = plans.Validate(s, nil); p.SwapMiB != 0 {
		t.Fatalf("swap 0 became %d", p.SwapMiB)
	}
	// A VM-only plan may say swap 0 (or nothing), never a swap it cannot give.
	v := vmSpec()
	v.SwapMiB = new(0)
	if _, err := plans.Validate(v, nil); err != nil {
		t.Fatalf("vm plan with swap 0: %v", err)
	}
}

func TestDefaultsAreExplicit(t *testing.T) {
	p, err := plans.Validate(flexSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.VMSuspendMode != plans.SuspendStop || p.VMClone != plans.CloneFull || p.Nodes == nil || p.IPPool != nil ||
		p.RateMbps != nil || p.BandwidthGiB != nil {
		t.Fatalf("defaults: %+v", p)
	}
	if len(p.GuestTypes) != 2 || p.GuestTypes[0] != plans.Container || p.GuestTypes[1] != plans.VM {
		t.Fatalf("guest types not in canonical order: %v", p.GuestTypes)
	}
}

// R15: a container-only plan asking for pause is refused when saved, permanently; the same mode
// on a plan that offers VMs is fine.
func TestContainerPlanCannotPause(t *testing.T) {
	s := containerSpec()
	s.VMSuspendMode = plans.SuspendPause
	_, err := plans.Validate(s, nil)
	p := problemOf(t, err)
	if p.Code != i18n.CodeNotPossibleContainer || p.Permanence != i18n.Permanent || p.Status != 422 {
		t.Fatalf("container plan with pause: %+v", p)
	}
	if len(p.Fields) != 1 || p.Fields[0].Field != "vm_suspend_mode" {
		t.Fatalf("fields: %+v", p.Fields)
	}
	s.VMSuspendMode = plans.SuspendStop
	if _, err := plans.Validate(s, nil); err != nil {
		t.Fatalf("container plan with stop: %v", err)
	}
	for _, spec := range []plans.Spec{flexSpec(), vmSpec()} {
		spec.VMSuspendMode = plans.SuspendPause
		if p, err := plans.Validate(spec, nil); err != nil || p.VMSuspendMode != plans.SuspendPause {
			t.Fatalf("%s with pause: %v", spec.Code, err)
		}
	}
}

func TestValidationFailures(t *testing.T) {
	clusters := plans.Clusters{"default": {"pve1", "pve2"}, "other": nil}
	cases := []struct {
		name  string
		edit  func(s *plans.Spec)
		field string
		code  i18n.FieldCode
	}{
		{"bad guest type", func(s *plans.Spec) { s.GuestTypes = []plans.GuestType{"lxc"} }, "guest_types[0]", i18n.FieldOneOf},
		{"no guest type", func(s *plans.Spec) { s.GuestTypes = nil }, "guest_types", i18n.FieldRequired},
		{"duplicate guest type", func(s *plans.Spec) { s.GuestTypes = []plans.GuestType{plans.Container, plans.Container} }, "guest_types", i18n.FieldDuplicate},
		{"empty container catalog", func(s *plans.Spec) { s.OS.Container = map[string]string{} }, "os.container", i18n.FieldRequired},
		{"empty vm catalog", func(s *plans.Spec) { s.GuestTypes = append(s.GuestTypes, plans.VM) }, "os.vm", i18n.FieldRequired},
		{"iso as ostemplate", func(s *plans.Spec) { s.OS.Container["debian-12"] = "local:iso/debian-12.iso" }, "os.container[debian-12]", i18n.FieldPattern},
		{"path as ostemplate", func(s *plans.Spec) {
			s.OS.Container["debian-12"] = "/var/lib/vz/template/cache/debian-12-standard_12.7-1_amd64.tar.zst"
		}, "os.container[debian-12]", i18n.FieldPattern},
		{"ostemplate without storage", func(s *plans.Spec) { s.OS.Container["debian-12"] = "vztmpl/debian-12.tar.zst" }, "os.container[debian-12]", i18n.FieldPattern},
		{"empty ostemplate", func(s *plans.Spec) { s.OS.Container["debian-12"] = "" }, "os.container[debian-12]", i18n.FieldRequired},
		{"bad os name", func(s *plans.Spec) { s.OS.Container["debian 12"] = "local:vztmpl/x.tar.zst" }, "os.container[debian 12]", i18n.FieldPattern},
		{"vm template below 100", func(s *plans.Spec) {
			s.GuestTypes = append(s.GuestTypes, plans.VM)
			s.OS.VM = map[string]plans.VMTemplate{"debian-12": {VMID: 99}}
		}, "os.vm[debian-12]", i18n.FieldTooSmall},
		{"negative cores", func(s *plans.Spec) { s.Cores = new(-1) }, "cores", i18n.FieldTooSmall},
		{"too many cores", func(s *plans.Spec) { s.Cores = new(8193) }, "cores", i18n.FieldTooLarge},
		{"cores above 512", func(s *plans.Spec) { s.Cores = new(513) }, "cores", i18n.FieldTooLarge},
		{"memory above 4 TiB", func(s *plans.Spec) { s.MemoryMiB = new(4<<20 + 1) }, "memory_mib", i18n.FieldTooLarge},
		{"swap above 4 TiB", func(s *plans.Spec) { s.SwapMiB = new(4<<20 + 1) }, "swap_mib", i18n.FieldTooLarge},
		{"disk above 64 TiB", func(s *plans.Spec) { s.DiskGiB = new(64<<10 + 1) }, "disk_gib", i18n.FieldTooLarge},
		// 2^33 GiB is 2^63 bytes: disk_gib × GiB would overflow int64.
		{"disk whose bytes overflow int64", func(s *plans.Spec) { s.DiskGiB = new(1 << 33) }, "disk_gib", i18n.FieldTooLarge},
		{"bandwidth whose bytes overflow int64", func(s *plans.Spec) { s.BandwidthGiB = new(int64(1) << 33) }, "bandwidth_gib", i18n.FieldTooLarge},
		{"no cores", func(s *plans.Spec) { s.Cores = nil }, "cores", i18n.FieldRequired},
		{"memory below Proxmox minimum", func(s *plans.Spec) { s.MemoryMiB = new(8) }, "memory_mib", i18n.FieldTooSmall},
		{"negative swap", func(s *plans.Spec) { s.SwapMiB = new(-512) }, "swap_mib", i18n.FieldTooSmall},
		{"zero disk", func(s *plans.Spec) { s.DiskGiB = new(0) }, "disk_gib", i18n.FieldTooSmall},
		{"negative disk", func(s *plans.Spec) { s.DiskGiB = new(-20) }, "disk_gib", i18n.FieldTooSmall},
		{"negative bandwidth", func(s *plans.Spec) { s.BandwidthGiB = new(int64(-1)) }, "bandwidth_gib", i18n.FieldTooSmall},
		{"zero rate", func(s *plans.Spec) { s.RateMbps = new(0.0) }, "rate_mbps", i18n.FieldTooSmall},
		{"bad storage id", func(s *plans.Spec) { s.Storage = "1local" }, "storage", i18n.FieldPattern},
		{"bad bridge", func(s *plans.Spec) { s.Bridge = "vmbr 0" }, "bridge", i18n.FieldPattern},
		{"long bridge", func(s *plans.Spec) { s.Bridge = "vmbr0123456789ab" }, "bridge", i18n.FieldTooLong},
		{"unknown cluster", func(s *plans.Spec) { s.Cluster = "elsewhere" }, "cluster", i18n.FieldOneOf},
		{"node outside the cluster's", func(s *plans.Spec) { s.Nodes = []string{"pve1", "pve9"} }, "nodes[1]", i18n.FieldOneOf},
		{"bad node name", func(s *plans.Spec) { s.Nodes = []string{"-pve1"} }, "nodes[0]", i18n.FieldPattern},
		{"duplicate node", func(s *plans.Spec) { s.Nodes = []string{"pve1", "pve1"} }, "nodes", i18n.FieldDuplicate},
		{"bad ip pool", func(s *plans.Spec) { s.IPPool = new("pool a") }, "ip_pool", i18n.FieldPattern},
		{"bad suspend mode", func(s *plans.Spec) { s.VMSuspendMode = "hibernate" }, "vm_suspend_mode", i18n.FieldOneOf},
		{"bad clone mode", func(s *plans.Spec) { s.VMClone = "copy" }, "vm_clone", i18n.FieldOneOf},
		{"vm catalog on a container plan", func(s *plans.Spec) { s.OS.VM = map[string]plans.VMTemplate{"debian-12": {VMID: 9000}} }, "os.vm", i18n.FieldNotApplicable},
		{"linked clone on a container plan", func(s *plans.Spec) { s.VMClone = plans.CloneLinked }, "vm_clone", i18n.FieldNotApplicable},
		{"swap on a vm plan", func(s *plans.Spec) {
			*s = vmSpec()
			s.SwapMiB = new(512)
		}, "swap_mib", i18n.FieldNotApplicable},
		{"container catalog on a vm plan", func(s *plans.Spec) {
			*s = vmSpec()
			s.OS.Container = map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}
		}, "os.container", i18n.FieldNotApplicable},
		{"no code", func(s *plans.Spec) { s.Code = "" }, "code", i18n.FieldRequired},
		{"bad code", func(s *plans.Spec) { s.Code = "ct/2g" }, "code", i18n.FieldPattern},
		{"no name", func(s *plans.Spec) { s.Name = "" }, "name", i18n.FieldRequired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := containerSpec()
			s.OS.Container = map[string]string{"debian-12": s.OS.Container["debian-12"]}
			c.edit(&s)
			_, err := plans.Validate(s, clusters)
			if err == nil {
				t.Fatal("accepted")
			}
			p := problemOf(t, err)
			if p.Code != i18n.CodeValidationFailed || p.Status != 422 {
				t.Fatalf("problem %v", p)
			}
			for _, f := range p.Fields {
				if f.Field == c.field && f.Code == c.code {
					return
				}
			}
			t.Fatalf("want %s:%s, got %v", c.field, c.code, p)
		})
	}
}

// Every failure of a spec is reported at once, one entry per field, in a stable order.
func TestValidationListsEveryField(t *testing.T) {
	s := containerSpec()
	s.Cores, s.DiskGiB, s.Storage = new(0), new(-1), ""
	s.OS.Container = map[string]string{"a": "x", "b": "y", "c": "z"}
	var first string
	for i := 0; i < 20; i++ {
		_, err := plans.Validate(s, nil)
		got := problemOf(t, err).Error()
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("order changed: %s vs %s", got, first)
		}
	}
	for _, want := range []string{"cores:too_small", "disk_gib:too_small", "storage:required", "os.container[a]:bad_format", "os.container[c]:bad_format"} {
		if !strings.Contains(first, want) {
			t.Errorf("%s missing from %s", want, first)
		}
	}
	if strings.Count(first, "storage:") != 1 {
		t.Errorf("storage reported twice: %s", first)
	}
}

// A bad guest type is reported alone: the catalog is not judged against types that are not valid.
func TestBadGuestTypeReportedAlone(t *testing.T) {
	for _, types := range [][]plans.GuestType{{"lxc"}, {plans.Container, "qemu"}, {plans.VM, plans.VM}} {
		s := flexSpec()
		s.GuestTypes = types
		_, err := plans.Validate(s, nil)
		p := problemOf(t, err)
		if len(p.Fields) != 1 || !strings.HasPrefix(p.Fields[0].Field, "guest_types") {
			t.Errorf("%v: %v", types, p)
		}
	}
}

// R10: capabilities per offered type, permanent vs temporary, with catalog reasons.
func TestCapabilities(t *testing.T) {
	flex := flexSpec()
	flex.VMSuspendMode = plans.SuspendPause
	p, err := plans.Validate(flex, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A module claiming pause for containers changes nothing: that refusal is permanent.
	built := plans.Built{
		plans.Container: {plans.CapCreate, plans.CapSuspend, plans.CapPause},
		plans.VM:        {plans.CapCreate, plans.CapSuspend},
	}
	caps := plans.CapabilitiesOf(p, built)
	if len(caps) != 2 || len(caps[plans.Container]) != len(plans.AllCapabilities) || len(caps[plans.VM]) != len(plans.AllCapabilities) {
		t.Fatalf("caps: %v", caps)
	}
	ct, vm := caps[plans.Container], caps[plans.VM]
	for _, c := range []plans.Capability{plans.CapPause, plans.CapHibernate, plans.CapISOInstall, plans.CapPXEBoot, plans.CapFirmwareSelection} {
		s := ct[c]
		if s.Available || s.Refusal != i18n.Permanent || !strings.HasPrefix(s.Reason, "capability.not_possible.") {
			t.Errorf("container %s: %+v", c, s)
		}
	}
	for _, c := range []plans.Capability{plans.CapConsole, plans.CapReinstall, plans.CapUsage} {
		if s := ct[c]; s.Available || s.Refusal != i18n.Temporary || s.Reason != plans.ReasonNotYetAvailable {
			t.Errorf("container %s: %+v", c, s)
		}
	}
	if s := ct[plans.CapCreate]; !s.Available || s.Refusal != "" || s.Reason != "" {
		t.Errorf("container create: %+v", s)
	}
	// VM: ISO, PXE and firmware are not built yet (temporary), pause is suspend on a pause plan.
	for _, c := range []plans.Capability{plans.CapISOInstall, plans.CapPXEBoot, plans.CapFirmwareSelection, plans.CapConsole} {
		if s := vm[c]; s.Available || s.Refusal != i18n.Temporary {
			t.Errorf("vm %s: %+v", c, s)
		}
	}
	if s := vm[plans.CapPause]; !s.Available {
		t.Errorf("vm pause on a pause plan with suspend built: %+v", s)
	}
	if s := plans.CapabilitiesOf(p, nil)[plans.VM][plans.CapPause]; s.Available || s.Refusal != i18n.Temporary {
		t.Errorf("vm pause with nothing built: %+v", s)
	}
	p.VMSuspendMode = plans.SuspendStop
	if s := plans.CapabilitiesOf(p, built)[plans.VM][plans.CapPause]; s.Available || s.Refusal != i18n.Permanent || s.Reason != plans.ReasonPlanSuspendsByStop {
		t.Errorf("vm pause on a stop plan: %+v", s)
	}
	// Only offered types are listed.
	ctOnly, _ := plans.Validate(containerSpec(), nil)
	if caps := plans.CapabilitiesOf(ctOnly, built); len(caps) != 1 || caps[plans.VM] != nil {
		t.Errorf("container plan lists %v", caps)
	}
}

// Every reason a capability can give is a real translation in all nine languages.
func TestReasonsTranslated(t *testing.T) {
	keys := plans.ReasonKeys()
	if len(keys) != 17 {
		t.Fatalf("reason keys %v", keys)
	}
	for _, key := range keys {
		en, ok := i18n.Lookup("en", key)
		if !ok || en == "" {
			t.Fatalf("en: %s missing", key)
		}
		for _, lang := range i18n.Languages[1:] {
			msg, ok := i18n.Lookup(lang, key)
			if !ok || msg == "" || msg == en {
				t.Errorf("%s: %s missing or untranslated: %q", lang, key, msg)
			}
		}
	}
	s := plans.State{Refusal: i18n.Permanent, Reason: "capability.not_possible.pause"}
	if s.Message("de") == s.Message("en") || s.Message("tr") == s.Message("en") || (plans.State{Available: true}).Message("de") != "" {
		t.Fatal("State.Message does not translate")
	}
}

func TestParseYAML(t *testing.T) {
	specs, err := plans.ParseYAML([]byte(`
- code: a
  name: A
  guest_types: [container]
  cluster: default
  cores: 1
  memory_mib: 512
  disk_gib: 8
  storage: local-lvm
  bridge: vmbr0
  rate_mbps: 12
  os:
    container: {debian-12: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}
`))
	if err != nil || len(specs) != 1 {
		t.Fatalf("%v %v", specs, err)
	}
	p, err := plans.Validate(specs[0], nil)
	if err != nil || p.SwapMiB != 0 || p.RateMbps == nil || *p.RateMbps != 12 {
		t.Fatalf("%+v %v", p, err)
	}
	if specs, err := plans.ParseYAML(nil); err != nil || len(specs) != 0 {
		t.Fatalf("empty file: %v %v", specs, err)
	}
	for name, doc := range map[string]string{
		"unknown key swap_mb": "- code: a\n  swap_mb: 512\n",
		"wrong type":          "- code: a\n  cores: two\n",
		"string for int":      "- code: a\n  swap_mib: \"0\"\n",
		"not a list":          "code: a\n",
		"two documents":       "- code: a\n---\n- code: b\n",
	} {
		if _, err := plans.ParseYAML([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
