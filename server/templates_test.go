package server_test

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pvebill/modules/pve/pvesim"
)

// putVMPlan stores a VM plan whose catalog maps debian-12 to entry (a vmid or a template name).
func (h *svcHarness) putVMPlan(t *testing.T, code, storage string, entry any) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"name": code, "cluster": "default", "cores": 1, "memory_mib": 1024, "disk_gib": 10,
		"storage": storage, "bridge": "vmbr0", "guest_types": []string{"vm"}, "os": map[string]any{"vm": map[string]any{"debian-12": entry}}})
	if r := h.adminBody("PUT", "/v1/admin/plans/"+code, string(raw)); r.Status != 200 && r.Status != 201 {
		t.Fatalf("put plan %s: %d %s", code, r.Status, r.Body)
	}
}

// createVMs creates n VMs of plan and returns the node each landed on, and the clone requests
// Proxmox received ("POST path target=...").
func (h *svcHarness) createVMs(t *testing.T, prefix, plan string, n int) (map[string]string, []string) {
	t.Helper()
	h.sim.ResetLog()
	nodes := map[string]string{}
	for i := 0; i < n; i++ {
		id := prefix + "-" + strconv.Itoa(i)
		succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, plan)))
		svc := h.service(id)
		g, _ := h.sim.Guest(int(svc["vmid"].(float64)))
		if g.Node != svc["node"] || g.Status != "running" {
			t.Fatalf("%s: guest on %s (%s), service says %v", id, g.Node, g.Status, svc["node"])
		}
		nodes[id] = g.Node
	}
	var clones []string
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/clone") {
			clones = append(clones, q.Path+" target="+q.Form.Get("target")+" storage="+q.Form.Get("storage"))
		}
	}
	sort.Strings(clones)
	return nodes, clones
}

func distinct(m map[string]string) []string {
	set := map[string]bool{}
	for _, v := range m {
		set[v] = true
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// R52 (docs/proxmox.md §16): a plan's VM catalog entry may name a template by name; every node's
// template of that name serves its own node (cloned there, no target), and a node without one
// is no candidate. VMs fill both nodes that hold a copy.
func TestVMTemplateByNameOnEveryNode(t *testing.T) {
	h := threeNodes(t, "sqlite")
	if err := h.sim.SeedGuest(pvesim.Guest{VMID: 9001, Type: "qemu", Node: "pve2", Template: true, Config: map[string]string{
		"name": "debian-12-cloud", "memory": "2048", "scsi0": "local-lvm:base-9001-disk-0,size=8G",
		"ide2": "local-lvm:vm-9001-cloudinit,media=cdrom", "net0": "virtio=BC:24:11:00:90:01,bridge=vmbr0,firewall=1"}}); err != nil {
		t.Fatal(err)
	}
	h.putVMPlan(t, "vm-by-name", "local-lvm", "debian-12-cloud")
	if r := h.billing("GET", "/v1/plans/vm-by-name", nil); !strings.Contains(string(r.Body), `"debian-12":"debian-12-cloud"`) {
		t.Fatalf("plan as read back: %s", r.Body)
	}
	nodes, clones := h.createVMs(t, "byname", "vm-by-name", 4)
	if got := distinct(nodes); len(got) != 2 || got[0] != "pve1" || got[1] != "pve2" {
		t.Fatalf("VMs landed on %v, want pve1 and pve2 (the nodes holding a copy)", nodes)
	}
	for _, c := range clones {
		if !strings.HasPrefix(c, "/nodes/pve1/qemu/9000/clone target= ") && !strings.HasPrefix(c, "/nodes/pve2/qemu/9001/clone target= ") {
			t.Errorf("clone request %s: each node clones its own template, without target", c)
		}
	}
}

// R52 (docs/proxmox.md §16): a template whose volumes are all on shared storage serves every
// node through clone with target, when the plan's storage is shared too; with the plan's storage
// local, or an ISO on local storage in the template's drive, only the template's node is served
// (Proxmox would refuse target), and nothing is sent that Proxmox refuses.
func TestSharedTemplateServesEveryNode(t *testing.T) {
	h := threeNodes(t, "sqlite")
	h.sim.AddStorage("ceph", "rbd", []string{"images"}, true)
	// pve1 holds the demo guests (3 GiB): with 64 GiB it is as full after one 1 GiB VM (4/64) as
	// the others are (1/16), so three creates go to three nodes.
	h.sim.SetNodeOptions("pve1", pvesim.NodeOptions{MemoryBytes: 64 << 30})
	seed := func(vmid int, ide2 string) {
		if err := h.sim.SeedGuest(pvesim.Guest{VMID: vmid, Type: "qemu", Node: "pve1", Template: true, Config: map[string]string{
			"name": "shared-" + strconv.Itoa(vmid), "memory": "2048", "scsi0": "ceph:base-" + strconv.Itoa(vmid) + "-disk-0,size=8G", "ide2": ide2,
			"ide0": "ceph:vm-" + strconv.Itoa(vmid) + "-cloudinit,media=cdrom", "net0": "virtio=BC:24:11:00:91:00,bridge=vmbr0,firewall=1"}}); err != nil {
			t.Fatal(err)
		}
	}
	seed(9100, "none,media=cdrom")
	seed(9200, "local:iso/debian-12.7.0-amd64-netinst.iso,media=cdrom")

	h.putVMPlan(t, "vm-shared", "ceph", 9100)
	nodes, clones := h.createVMs(t, "shared", "vm-shared", 3)
	if got := distinct(nodes); len(got) != 3 {
		t.Fatalf("VMs from a shared template landed on %v, want all three nodes", nodes)
	}
	for _, c := range clones {
		if !strings.HasPrefix(c, "/nodes/pve1/qemu/9100/clone") || !strings.HasSuffix(c, " storage=ceph") ||
			(strings.Contains(c, "target=pve") && strings.Contains(c, "target=pve1")) {
			t.Errorf("clone request %s", c)
		}
	}
	if !strings.Contains(strings.Join(clones, "\n"), "target=pve2") || !strings.Contains(strings.Join(clones, "\n"), "target=pve3") {
		t.Errorf("clones %v: want target=pve2 and target=pve3", clones)
	}

	for _, tc := range []struct {
		plan, storage string
		entry         int
	}{{"vm-local-disk", "local-lvm", 9100}, {"vm-local-iso", "ceph", 9200}} {
		h.putVMPlan(t, tc.plan, tc.storage, tc.entry)
		nodes, clones := h.createVMs(t, tc.plan, tc.plan, 2)
		if got := distinct(nodes); len(got) != 1 || got[0] != "pve1" {
			t.Errorf("%s: VMs on %v, want pve1 only", tc.plan, nodes)
		}
		for _, c := range clones {
			if strings.Contains(c, "target=pve") {
				t.Errorf("%s: %s sent with target", tc.plan, c)
			}
		}
	}
}
