package provision_test

import (
	"testing"

	"pvebill/modules/ippool"
	"pvebill/modules/pve/pvesim"
)

// R14: live figures come from one status call; when Proxmox cannot answer, power is unknown
// and every figure is null, never a healthy-looking zero. A container never has guest-agent
// data; a VM reports whether its agent is configured.
func TestServiceView(t *testing.T) {
	// The real address pools: the view reads a service's addresses with the service row.
	e := newEnvWithPlanPool(t, nil)
	ctx := t.Context()
	if _, err := ippool.NewService(e.db).Import(ctx, []ippool.Spec{{Name: "pool-a", Cluster: "default", Bridge: "vmbr0",
		CIDR: "203.0.113.0/24", Gateway: "203.0.113.1", First: "203.0.113.10", Last: "203.0.113.20"}}, ippool.SourceAPI); err != nil {
		t.Fatal(err)
	}
	e.create(ctReq("svc-view"))
	e.create(vmReq("svc-view-vm", "vm-pool"))

	e.sim.ResetLog()
	v, err := e.svc.Get(ctx, "whmcs", "svc-view")
	if err != nil {
		t.Fatal(err)
	}
	if v.Power != "running" || v.Monitoring.GuestAgent != nil || v.Monitoring.SwapMaxBytes == nil || v.Monitoring.CPU == nil {
		t.Fatalf("container view %+v", v)
	}
	if n := len(e.sim.Requests()); n != 1 {
		t.Fatalf("%d Proxmox calls for one view, want 1", n)
	}
	vm, err := e.svc.Get(ctx, "whmcs", "svc-view-vm")
	if err != nil {
		t.Fatal(err)
	}
	if vm.Monitoring.GuestAgent == nil || !*vm.Monitoring.GuestAgent || vm.Monitoring.SwapBytes != nil || vm.Monitoring.DiskBytes != nil ||
		len(vm.IPAddresses) != 1 || vm.IPAddresses[0] != "203.0.113.10" {
		t.Fatalf("VM view %+v", vm)
	}

	e.sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/status/current", Status: 500, Message: "proxy loop"})
	v, err = e.svc.Get(ctx, "whmcs", "svc-view")
	if err != nil {
		t.Fatal(err)
	}
	m := v.Monitoring
	if v.Power != "unknown" || m.CPU != nil || m.MemoryBytes != nil || m.SwapBytes != nil || m.NetinBytes != nil || m.UptimeSeconds != nil {
		t.Fatalf("view without Proxmox %+v", v)
	}
}
