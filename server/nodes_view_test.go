package server_test

import (
	"testing"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

// R52: the admin node view gives each node's memory, the memory committed to its guests (a
// stopped one counts, a template does not), its guests, its active storages' room, and why an
// offline node is no candidate, from the simulator over HTTP.
func TestAdminClusterNodes(t *testing.T) {
	sim := pvesim.New(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Nodes: []string{"pve1", "pve2", "pve3"}})
	sim.SetNodeOptions("pve1", pvesim.NodeOptions{MemoryBytes: 8 << 30})
	sim.SetNodeOptions("pve2", pvesim.NodeOptions{MemoryBytes: 16 << 30})
	sim.SetNodeOnline("pve3", false)
	for _, g := range []pvesim.Guest{
		{VMID: 500, Type: "qemu", Node: "pve1", Config: map[string]string{"memory": "2048"}},
		{VMID: 501, Type: "lxc", Node: "pve2", Running: true, Config: map[string]string{"memory": "1024"}},
		{VMID: 502, Type: "qemu", Node: "pve1", Template: true, Config: map[string]string{"memory": "4096", "template": "1"}},
	} {
		if err := sim.SeedGuest(g); err != nil {
			t.Fatal(err)
		}
	}
	h := newServicesReplica(t, dbtest.Open(t, "sqlite"), simtest.Start(t, sim), nil, "test-nodes", false)
	r := h.admin("GET", "/v1/admin/clusters/default/nodes")
	want := `{"nodes":[` +
		`{"node":"pve1","status":"online","maintenance":false,"memory_bytes":8589934592,"memory_committed_bytes":2147483648,` +
		`"creates_in_flight":0,"guests":1,"storages":[{"storage":"local","avail_bytes":107374182400},{"storage":"local-lvm","avail_bytes":429496729600}]},` +
		`{"node":"pve2","status":"online","maintenance":false,"memory_bytes":17179869184,"memory_committed_bytes":1073741824,` +
		`"creates_in_flight":0,"guests":1,"storages":[{"storage":"local","avail_bytes":107374182400},{"storage":"local-lvm","avail_bytes":429496729600}]},` +
		`{"node":"pve3","status":"offline","maintenance":false,"memory_bytes":0,"memory_committed_bytes":0,` +
		`"creates_in_flight":0,"guests":0,"storages":[],"skipped":"offline"}]}`
	if r.Status != 200 || string(r.Body) != want {
		t.Fatalf("node view %d\n%s\nwant\n%s", r.Status, r.Body, want)
	}
	reads := 0
	for _, q := range sim.Requests() {
		if q.Path == "/cluster/resources" {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("the node view read /cluster/resources %d times, want 1", reads)
	}
	checkProblem(t, h.admin("GET", "/v1/admin/clusters/nope/nodes"), 404, "not_found")
	checkProblem(t, h.billing("GET", "/v1/admin/clusters/default/nodes", nil), 403, "forbidden")
}
