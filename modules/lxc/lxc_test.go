package lxc_test

import (
	"errors"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
)

// A container cannot be paused: a pause mode is a permanent refusal and nothing reaches
// Proxmox (R10, R15).
func TestSuspendRefusesPause(t *testing.T) {
	sim := simtest.Start(t, nil)
	client, err := pve.New(pve.Config{Cluster: "default", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Timeout: 5 * time.Second, TaskPollInterval: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	g := kinds.Guest{Client: client, Cluster: "default", Node: "pve1", VMID: 200, ServiceID: "x"}
	err = lxc.New().Suspend(t.Context(), g, plans.SuspendPause, nil)
	var p *i18n.Problem
	if !errors.As(err, &p) || p.Code != i18n.CodeNotPossibleContainer || p.Permanence != i18n.Permanent {
		t.Fatalf("pause: %v", err)
	}
	if n := len(sim.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// The create body is the short one whatever the plan: swap always present, rootfs in
// allocation form, unprivileged, net0 with the firewall, the stamp (R5–R7, R9, R39).
func TestCreateRequest(t *testing.T) {
	p := plans.Plan{Code: "c", GuestTypes: []plans.GuestType{plans.Container}, Cores: 2, MemoryMiB: 1024, SwapMiB: 0,
		DiskGiB: 16, Storage: "local-zfs", Bridge: "vmbr1",
		OS: plans.OSCatalog{Container: map[string]string{"deb": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}}}
	req, err := lxc.CreateRequest(kinds.Guest{ClientID: "c1", ServiceID: "svc-1"}, kinds.CreateSpec{Plan: p, OS: "deb", Hostname: "h.example",
		Address: &kinds.Address{CIDR: "198.51.100.7/24", Gateway: "198.51.100.1", Nameservers: []string{"198.51.100.53", "198.51.100.54"}}})
	if err != nil {
		t.Fatal(err)
	}
	if req.Swap == nil || *req.Swap != 0 || req.RootFS != "local-zfs:16" || req.Unprivileged == nil || !*req.Unprivileged ||
		req.Arch != "" || req.Features != "" || len(req.MountPoints) != 0 || req.Start {
		t.Fatalf("request %+v", req)
	}
	if req.Net[0] != "name=eth0,bridge=vmbr1,firewall=1,ip=198.51.100.7/24,gw=198.51.100.1" {
		t.Fatalf("net0 %q", req.Net[0])
	}
	if req.Nameserver != "198.51.100.53 198.51.100.54" || !kinds.HasStamp(req.Description, kinds.Guest{ClientID: "c1", ServiceID: "svc-1"}) ||
		kinds.HasStamp(req.Description, kinds.Guest{ClientID: "c1", ServiceID: "svc-10"}) {
		t.Fatalf("nameserver %q description %q", req.Nameserver, req.Description)
	}
	if _, err := lxc.CreateRequest(kinds.Guest{ClientID: "c1", ServiceID: "svc-1"}, kinds.CreateSpec{Plan: p, OS: "plan9"}); err == nil {
		t.Fatal("an OS outside the catalog was accepted")
	}
}
