package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/modules/migrate"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	wiring "pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

// fillNodes are the four nodes of scenario 12 and their memory, in GiB (unequal on purpose).
var fillNodes = []struct {
	name string
	gib  int64
}{{"node01", 64}, {"node02", 128}, {"node03", 128}, {"node04", 256}}

// fillPlans are a container plan and a VM plan whose catalog names its template by name: every
// node holds a copy (R52). Disks go to "big", a local storage with room for every guest.
func fillPlans() []plans.Spec {
	return []plans.Spec{
		{Code: "ct-fill", Name: "CT fill", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
			Cores: new(1), MemoryMiB: new(256), DiskGiB: new(1), Storage: "big", Bridge: "vmbr0",
			OS: plans.OSCatalog{Container: map[string]string{"debian-12": debianTmpl}}},
		{Code: "vm-fill", Name: "VM fill", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default",
			Cores: new(1), MemoryMiB: new(512), DiskGiB: new(1), Storage: "big", Bridge: "vmbr0",
			OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {Name: "debian-12-cloud"}}}},
	}
}

// fillSim is the cluster of scenario 12: four nodes of unequal memory, each with its own copy of
// the VM template "debian-12-cloud", and the container template.
func fillSim(t *testing.T, task time.Duration) *pvesim.Sim {
	t.Helper()
	var names []string
	for _, n := range fillNodes {
		names = append(names, n.name)
	}
	sim := pvesim.New(pvesim.Options{Nodes: names, TokenID: tokenID, TokenSecret: tokenSecret, Seed: 5, TaskDuration: task})
	sim.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126<<20, "vztmpl")
	sim.AddStorage("big", "lvmthin", []string{"images", "rootdir"}, false)
	for i, n := range fillNodes {
		sim.SetNodeOptions(n.name, pvesim.NodeOptions{MemoryBytes: n.gib << 30})
		id := 9001 + i
		if err := sim.SeedGuest(pvesim.Guest{VMID: id, Type: "qemu", Node: n.name, Template: true, Config: map[string]string{
			"name": "debian-12-cloud", "memory": "512", "scsi0": fmt.Sprintf("local-lvm:base-%d-disk-0,size=1G", id),
			"ide2": fmt.Sprintf("local-lvm:vm-%d-cloudinit,media=cdrom", id), "net0": "virtio=BC:24:11:00:90:00,bridge=vmbr0,firewall=1"}}); err != nil {
			t.Fatal(err)
		}
	}
	return sim
}

// placementFill is scenario 12 (R52, R53): creates of a container plan and a VM plan (one in
// three a VM) submitted at once to four nodes of 64, 128, 128 and 256 GiB: every node's committed
// share of its memory within 5 points of the others', no node over its memory, VMs on all four
// (each node clones its own copy of the template named by name). Then a drain of the smallest
// node: its guests migrate one at a time, the time against the sum of the simulator's migration
// task times (the bound at one migration per node), none lost, none left stopped.
func placementFill(t *testing.T, rep *Report) {
	const sc = "12 placement"
	creates, conc := scale(1000, 120), 32
	sim := fillSim(t, scale(20*time.Millisecond, 5*time.Millisecond))
	// A migration takes long against pvebill's own work for it, as on a real cluster.
	migration := scale(time.Second, 200*time.Millisecond)
	sim.SetTaskDuration("vzmigrate", migration)
	sim.SetTaskDuration("qmigrate", migration)
	st, api := fillStack(t, sim)

	_, _ = load(t, http.DefaultClient, creates, conc, http.StatusOK, func(i int) *http.Request {
		plan := "ct-fill"
		if i%3 == 2 {
			plan = "vm-fill"
		}
		body, _ := json.Marshal(provision.CreateRequest{ServiceID: fmt.Sprintf("fill-%04d", i), Plan: plan,
			Hostname: fmt.Sprintf("fill-%04d.example.com", i), OS: "debian-12", RootPassword: "Sup3r-Secret-Root-pw"})
		return signedRequest(http.MethodPost, api.URL+"/v1/services?wait=60", body)
	})
	shares, over, vmNodes := fillFigures(t, sim)
	lo, hi := 1.0, 0.0
	for _, s := range shares {
		lo, hi = min(lo, s), max(hi, s)
	}
	rep.target(sc, "committed share spread (max - min)", (hi-lo)*100, "points", "<=", 5, false,
		fmt.Sprintf("%d creates, %d at once, nodes 64/128/128/256 GiB; shares %s", creates, conc, sharesText(shares)))
	rep.target(sc, "nodes over their memory", float64(over), "", "==", 0, true, "")
	rep.target(sc, "nodes holding VMs", float64(vmNodes), "", "==", 4, true, "template by name, one copy per node")

	drainFigures(t, rep, sim, st, migration)
}

// fillFigures reads each node's committed share of its memory, the nodes over it, and the nodes
// that hold a VM that is not a template.
func fillFigures(t *testing.T, sim *pvesim.Sim) (map[string]float64, int, int) {
	t.Helper()
	rows := resources(t, sim)
	mem, used, vms := map[string]int64{}, map[string]int64{}, map[string]bool{}
	for _, r := range rows {
		switch {
		case r.Type == "node":
			mem[r.Node] = int64(r.MaxMem)
		case r.VMID.Int() > 0 && !bool(r.Template):
			used[r.Node] += int64(r.MaxMem)
			if r.Type == "qemu" {
				vms[r.Node] = true
			}
		}
	}
	shares, over := map[string]float64{}, 0
	for n, m := range mem {
		shares[n] = float64(used[n]) / float64(m)
		if used[n] > m {
			over++
		}
	}
	return shares, over, len(vms)
}

// resources is the simulator's /cluster/resources, read through a client of its own.
func resources(t *testing.T, sim *pvesim.Sim) []pve.ClusterResource {
	t.Helper()
	hs := httptest.NewServer(sim)
	defer hs.Close()
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	rows, err := pc.Cluster().Resources(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func sharesText(shares map[string]float64) string {
	var b bytes.Buffer
	for _, n := range fillNodes {
		fmt.Fprintf(&b, "%s %.1f%% ", n.name, shares[n.name]*100)
	}
	return b.String()
}

// drainFigures drains node01 and measures it.
func drainFigures(t *testing.T, rep *Report, sim *pvesim.Sim, st *wiring.Stack, task time.Duration) {
	const sc = "12 placement"
	ctx := context.Background()
	running := map[int]bool{}
	for _, r := range resources(t, sim) {
		if r.Node == "node01" && r.VMID.Int() > 0 && r.Status == "running" {
			running[r.VMID.Int()] = true
		}
	}
	enabled := true
	start := time.Now()
	ops, err := st.Moves.SetMaintenance(ctx, "default", "node01", migrate.MaintenanceRequest{Enabled: &enabled, Drain: true})
	if err != nil {
		t.Fatal(err)
	}
	st.Exec.Kick()
	failed := 0
	for _, op := range ops {
		for {
			got, err := st.DB.GetOperation(ctx, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if models.IsTerminal(got.State) {
				if got.State != models.OpSucceeded {
					failed++
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	took := time.Since(start)
	lost, stopped := 0, 0
	for id := range running {
		g, ok := sim.Guest(id)
		switch {
		case !ok:
			lost++
		case g.Node == "node01":
			lost++ // not moved
		case g.Status != "running":
			stopped++
		}
	}
	bound := time.Duration(len(ops)) * task
	rep.info(sc, "drain: guests", float64(len(ops)), "", "node01, one migration at a time")
	rep.target(sc, "drain: time / bound", took.Seconds()/bound.Seconds(), "", "<=", 1.2, false,
		fmt.Sprintf("%v for %d migrations of %v each", took.Round(time.Millisecond), len(ops), task))
	rep.target(sc, "drain: failed migrations", float64(failed), "", "==", 0, true, "")
	rep.target(sc, "drain: guests lost or left behind", float64(lost), "", "==", 0, true, "")
	rep.target(sc, "drain: running guests left stopped", float64(stopped), "", "==", 0, true, "")
}

// fillStack is one pvebill replica over sim with the fill plans, its API served.
func fillStack(t *testing.T, sim *pvesim.Sim) (*wiring.Stack, *httptest.Server) {
	t.Helper()
	hs := httptest.NewServer(sim)
	t.Cleanup(hs.Close)
	// Task polls every 10 to 50 ms: the drain's figure measures pvebill's work per migration, not
	// the poll interval (100 ms to 2 s by default, which a real migration's minutes dwarf).
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret,
		TaskPollInterval: 10 * time.Millisecond, TaskPollMaxInterval: 50 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	st := replica(t, openDB(t, dialect(t)), pc, "bench", 64, time.Second, fillPlans())
	cfg := config.Defaults()
	cfg.Clients = []config.Client{{ID: billingID, Secret: billingSecret, Scopes: []string{"billing"}}}
	api := httptest.NewServer(server.New(serve.Options(st, cfg)))
	t.Cleanup(api.Close)
	return st, api
}
