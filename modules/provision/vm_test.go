package provision_test

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest"
)

// staticAddresses hands out one fixed address per service (a stand-in for the IPv4 pools in
// tests of the lifecycle, which only need Allocate to be idempotent per service).
type staticAddresses struct {
	mu       sync.Mutex
	given    map[string]string
	released []string
}

func (s *staticAddresses) Allocate(_ context.Context, _ string, k models.ServiceKey) (kinds.Address, error) {
	serviceID := k.ServiceID
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.given == nil {
		s.given = map[string]string{}
	}
	s.given[serviceID] = "203.0.113.10"
	return kinds.Address{CIDR: "203.0.113.10/24", Gateway: "203.0.113.1", Nameservers: []string{"203.0.113.53"}}, nil
}

func (s *staticAddresses) Release(_ context.Context, k models.ServiceKey) error {
	serviceID := k.ServiceID
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.given, serviceID)
	s.released = append(s.released, serviceID)
	return nil
}

func vmReq(id, plan string) provision.CreateRequest { return stacktest.Request(id, plan) }

// R8, R9: a VM is a full clone of the template on the template's node, configured through
// cloud-init (sshkeys in Proxmox's encoding), its disk grown to the plan size, and its
// ipfilter-net0 ipset filled before ipfilter is enabled.
func TestVMCreate(t *testing.T) {
	addrs := &staticAddresses{}
	e := newEnvWithPlanPool(t, addrs)
	e.create(vmReq("svc-vm", "vm-pool"))
	svc := e.service("svc-vm")
	vmid := strconv.Itoa(*svc.VMID)
	clones := e.requests("POST", "/qemu/9000/clone")
	if len(clones) != 1 {
		t.Fatalf("%d clones", len(clones))
	}
	f := clones[0].Form
	if f.Get("newid") != vmid || f.Get("full") != "1" || f.Get("storage") != "local-lvm" ||
		!strings.Contains(f.Get("description"), "pvebill-service: whmcs/svc-vm") {
		t.Fatalf("clone %v", f)
	}
	if !strings.HasPrefix(clones[0].Path, "/nodes/pve1/") {
		t.Fatalf("clone on %s, the template is on pve1", clones[0].Path)
	}
	cfgs := e.requests("PUT", "/qemu/"+vmid+"/config")
	if len(cfgs) == 0 {
		t.Fatal("no config update")
	}
	cf := cfgs[0].Form
	keys, _ := url.PathUnescape(cf.Get("sshkeys"))
	if cf.Get("ciuser") != "root" || cf.Get("cipassword") != testPassword || !strings.HasPrefix(keys, "ssh-ed25519 AAAA") ||
		strings.Contains(cf.Get("sshkeys"), "+") || cf.Get("ipconfig0") != "ip=203.0.113.10/24,gw=203.0.113.1" ||
		cf.Get("nameserver") != "203.0.113.53" {
		t.Fatalf("cloud-init %v", cf)
	}
	resizes := e.requests("PUT", "/qemu/"+vmid+"/resize")
	if len(resizes) != 1 || resizes[0].Form.Get("disk") != "scsi0" || resizes[0].Form.Get("size") != "10G" {
		t.Fatalf("resize %+v", resizes)
	}
	// The ipset entry is added before the firewall options enable ipfilter.
	entry, enable := -1, -1
	for i, r := range e.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/qemu/"+vmid+"/firewall/ipset/ipfilter-net0") && entry < 0 {
			entry = i
		}
		if r.Method == "PUT" && strings.HasSuffix(r.Path, "/qemu/"+vmid+"/firewall/options") && r.Form.Get("ipfilter") == "1" {
			enable = i
		}
	}
	if entry < 0 || enable < 0 || entry > enable {
		t.Fatalf("ipset entry at %d, ipfilter enabled at %d", entry, enable)
	}
	g, _ := e.sim.Guest(*svc.VMID)
	// The set holds the IPv4 address and net0's EUI-64 link-local address (R9, R54).
	set := g.IPSets["ipfilter-net0"]
	linkLocal := func(e string) bool { return strings.HasPrefix(e, "fe80:") }
	if g.Status != "running" || g.Firewall["ipfilter"] != "1" || len(set) != 2 || !slices.ContainsFunc(set, linkLocal) ||
		!strings.Contains(g.Config["net0"], "firewall=1") || kinds.RootDiskSize("scsi0", g.Config["scsi0"]) != 10*kinds.GiB {
		t.Fatalf("guest %+v", g)
	}
	assertNoSecret(t, e)
}

// A VM plan in pause mode pauses on suspend and resumes on unsuspend; terminate releases the
// address.
func TestVMPauseSuspend(t *testing.T) {
	addrs := &staticAddresses{}
	e := newEnvWithPlanPool(t, addrs)
	ctx := t.Context()
	e.create(vmReq("svc-vmp", "vm-pause"))
	vmid := *e.service("svc-vmp").VMID
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-vmp", provision.SuspendRequest{}))
	if g, _ := e.sim.Guest(vmid); !g.Paused {
		t.Fatalf("not paused: %+v", g)
	}
	if len(e.requests("POST", "/status/suspend")) != 1 || len(e.requests("POST", "/status/stop")) != 0 {
		t.Fatal("pause mode must pause, not stop")
	}
	// A paused VM is what its suspend mode asked for: drift repair leaves it alone.
	if r := e.enforce(); len(r.Enforced) != 0 {
		t.Fatalf("drift repair acted on a paused VM: %+v", r)
	}
	e.mustSucceed(e.svc.Unsuspend(ctx, "whmcs", "svc-vmp"))
	if g, _ := e.sim.Guest(vmid); g.Paused || g.Status != "running" {
		t.Fatalf("not resumed: %+v", g)
	}
	e.mustSucceed(e.svc.Terminate(ctx, "whmcs", "svc-vmp"))
	dels := e.requests("DELETE", "/qemu/"+strconv.Itoa(vmid))
	if len(dels) != 1 || dels[0].Form.Get("purge") != "1" || dels[0].Form.Get("destroy-unreferenced-disks") != "1" {
		t.Fatalf("destroy %+v", dels)
	}
	if len(addrs.released) != 1 || addrs.released[0] != "svc-vmp" {
		t.Fatalf("released %v", addrs.released)
	}
}

// R2 for VMs: a clone whose new id was taken meanwhile is retried on another id.
func TestVMCloneIDTaken(t *testing.T) {
	e := newEnvWithPlanPool(t, &staticAddresses{})
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/clone", Nth: 1, Status: 500,
		Message: "VM 100 already exists on node 'pve2'"})
	e.create(vmReq("svc-vm-taken", "vm-pool"))
	clones := e.requests("POST", "/qemu/9000/clone")
	if len(clones) != 2 || clones[0].Form.Get("newid") != "100" || clones[1].Form.Get("newid") != "101" {
		t.Fatalf("clones %+v", clones)
	}
	if v := *e.service("svc-vm-taken").VMID; v != 101 {
		t.Fatalf("vmid %d", v)
	}
}

// R12: container and VM vocabularies stay apart. Every request a VM create sends under /qemu/
// is free of the container words (TestContainerCreateBody pins the container body's exact keys,
// so it carries none of the VM's).
func TestVMCreateSpeaksOnlyTheVMVocabulary(t *testing.T) {
	e := newEnvWithPlanPool(t, &staticAddresses{})
	e.create(vmReq("svc-vm-r12", "vm-pool"))
	containerWords := map[string]bool{"ostemplate": true, "rootfs": true, "swap": true, "unprivileged": true,
		"ssh-public-keys": true, "password": true, "hostname": true}
	n := 0
	for _, r := range e.sim.Requests() {
		if !strings.Contains(r.Path, "/qemu/") {
			continue
		}
		n++
		for k := range r.Form {
			if containerWords[k] || (strings.HasPrefix(k, "mp") && len(k) > 2 && k[2] >= '0' && k[2] <= '9') {
				t.Errorf("%s %s sends the container key %q", r.Method, r.Path, k)
			}
		}
	}
	if n == 0 {
		t.Fatal("no VM request was sent")
	}
}
