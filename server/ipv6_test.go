package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
)

// ipv6Plans adds an IPv6 pool (a /48 of /64s, link-local gateway) and two plans through the
// admin API: a container plan with only ip6_pool and a VM plan with ip_pool and ip6_pool.
func ipv6Plans(t *testing.T, h *svcHarness) {
	t.Helper()
	pool := `{"cluster":"default","bridge":"vmbr0","cidr":"2001:db8::/48","gateway":"fe80::1","nameservers":["2001:db8::53"]}`
	r := h.signed("PUT", "/v1/admin/ip-pools/pool-6", "ops", adminSecret, []byte(pool))
	if r.Status != 201 {
		t.Fatalf("pool: %d %s", r.Status, r.Body)
	}
	p := r.json(t)["ip_pool"].(map[string]any)
	if p["family"] != "ipv6" || p["assign_prefix"] != float64(64) || p["first"] != nil || p["size"] != float64(65536) {
		t.Fatalf("pool view %s", r.Body)
	}
	ct, _ := json.Marshal(map[string]any{"name": "CT v6", "guest_types": []string{"container"}, "cluster": "default", "cores": 1,
		"memory_mib": 1024, "disk_gib": 8, "storage": "local-lvm", "bridge": "vmbr0", "ip6_pool": "pool-6",
		"os": map[string]any{"container": map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}}})
	vm, _ := json.Marshal(map[string]any{"name": "VM v6", "guest_types": []string{"vm"}, "cluster": "default", "cores": 2,
		"memory_mib": 2048, "disk_gib": 10, "storage": "local-lvm", "bridge": "vmbr0", "ip_pool": "pool-a", "ip6_pool": "pool-6",
		"os": map[string]any{"vm": map[string]int{"debian-12": 9000}}})
	for code, body := range map[string][]byte{"ct-v6": ct, "vm-v6": vm} {
		if r := h.signed("PUT", "/v1/admin/plans/"+code, "ops", adminSecret, body); r.Status != 201 {
			t.Fatalf("plan %s: %d %s", code, r.Status, r.Body)
		}
	}
}

// checkGuestIPv6 checks, in the simulator, the guest's IPv6 configuration and its
// ipfilter-net0 (R54, R9): the container's net0 carries ip6=/gw6=, the VM's ipconfig0 carries
// them beside its IPv4 address; the set holds the IPv4 address, the /64 and net0's EUI-64
// link-local address.
func checkGuestIPv6(t *testing.T, h *svcHarness, kind string, vmid int) {
	t.Helper()
	g, ok := h.sim.Guest(vmid)
	if !ok {
		t.Fatalf("guest %d missing", vmid)
	}
	var mac string
	for _, part := range strings.Split(g.Config["net0"], ",") {
		k, v, _ := strings.Cut(part, "=")
		if k == "hwaddr" || k == "macaddr" || k == "virtio" {
			mac = v
		}
	}
	ll, err := kinds.LinkLocal(mac)
	if err != nil {
		t.Fatalf("net0 %q: %v", g.Config["net0"], err)
	}
	want := []string{"2001:db8::/64", ll.String()}
	if kind == "container" {
		if !strings.Contains(g.Config["net0"], "ip=dhcp") || !strings.Contains(g.Config["net0"], "ip6=2001:db8::1/64") ||
			!strings.Contains(g.Config["net0"], "gw6=fe80::1") {
			t.Fatalf("container net0 %q", g.Config["net0"])
		}
	} else {
		if got := g.Config["ipconfig0"]; got != "ip=203.0.113.10/24,gw=203.0.113.1,ip6=2001:db8::1/64,gw6=fe80::1" {
			t.Fatalf("ipconfig0 %q", got)
		}
		want = append([]string{"203.0.113.10"}, want...)
	}
	got := slices.Clone(g.IPSets[kinds.IPFilterSet])
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s %v, want %v", kinds.IPFilterSet, got, want)
	}
}

// ipsetBeforeIPFilter checks in the request log that every ipset entry of the guest was written
// before the request that turned ipfilter on (R9).
func ipsetBeforeIPFilter(t *testing.T, h *svcHarness, vmid int) {
	t.Helper()
	lastAdd, firstOn := -1, -1
	marker := fmt.Sprintf("/%d/firewall/", vmid)
	for i, r := range h.sim.Requests() {
		if !strings.Contains(r.Path, marker) {
			continue
		}
		if r.Method == "POST" && strings.Contains(r.Path, "/ipset/"+kinds.IPFilterSet) {
			lastAdd = i
		}
		if r.Method == "PUT" && strings.HasSuffix(r.Path, "/firewall/options") && r.Form.Get("ipfilter") == "1" && firstOn < 0 {
			firstOn = i
		}
	}
	if lastAdd < 0 || (firstOn >= 0 && firstOn < lastAdd) {
		t.Fatalf("ipset written at %d, ipfilter on at %d", lastAdd, firstOn)
	}
}

func reinstallOverHTTP(t *testing.T, h *svcHarness, id string) {
	t.Helper()
	r := h.billing("POST", "/v1/services/"+id+"/reinstall/preview?wait=10", []byte(`{}`))
	in := r.json(t)["intent"].(map[string]any)
	if in["state"] != "preview_ready" {
		t.Fatalf("preview %s", r.Body)
	}
	body, _ := json.Marshal(map[string]any{"intent_id": in["id"], "root_password": rootPassword, "confirmations": in["confirmations"]})
	succeeded(t, h.billing("POST", "/v1/services/"+id+"/reinstall?wait=20", body))
}

// R54 over HTTP, both kinds: create assigns the service the pool's first /64 and writes it on
// the guest and into ipfilter-net0 before ipfilter is on; the view shows it; a reinstall writes
// it again on the new guest; terminate releases it.
func TestIPv6LifecycleOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, k := range []struct{ kind, plan string }{{"container", "ct-v6"}, {"vm", "vm-v6"}} {
			t.Run(dialect+"/"+k.kind, func(t *testing.T) {
				h := newServicesHarness(t, dialect)
				ipv6Plans(t, h)
				id := "v6-" + k.kind
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, k.plan)))
				svc := h.service(id)
				v6, _ := svc["ipv6"].(map[string]any)
				if v6 == nil || v6["prefix"] != "2001:db8::/64" || v6["address"] != "2001:db8::1" || v6["gateway"] != "fe80::1" {
					t.Fatalf("ipv6 %v", svc["ipv6"])
				}
				if !slices.Contains(svc["ip_addresses"].([]any), any("2001:db8::1")) {
					t.Fatalf("ip_addresses %v", svc["ip_addresses"])
				}
				vmid := int(svc["vmid"].(float64))
				checkGuestIPv6(t, h, k.kind, vmid)
				ipsetBeforeIPFilter(t, h, vmid)

				reinstallOverHTTP(t, h, id)
				checkGuestIPv6(t, h, k.kind, vmid)
				if v6 := h.service(id)["ipv6"].(map[string]any); v6["prefix"] != "2001:db8::/64" {
					t.Fatalf("ipv6 after reinstall %v", v6)
				}

				succeeded(t, h.billing("POST", "/v1/services/"+id+"/terminate?wait=20", nil))
				if s := h.service(id); s["ipv6"] != nil {
					t.Fatalf("ipv6 after terminate %v", s["ipv6"])
				}
				r := h.admin("GET", "/v1/admin/ip-pools")
				for _, p := range r.json(t)["ip_pools"].([]any) {
					if pm := p.(map[string]any); pm["name"] == "pool-6" && pm["used"] != float64(0) {
						t.Fatalf("pool-6 after terminate %v", pm)
					}
				}
			})
		}
	}
}

// R54: a restore recreates the container from its backup and writes the service's IPv6
// assignment and ipfilter-net0 again.
func TestIPv6RestoreOverHTTP(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	ipv6Plans(t, h)
	if r := h.signed("PUT", "/v1/admin/plans/ct-bk6", "ops", adminSecret,
		backupPlanBody("local", map[string]any{"ip6_pool": "pool-6"})); r.Status != 201 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	id := "v6-restore"
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-bk6")))
	vmid := int(h.service(id)["vmid"].(float64))
	op := finished(t, h, h.billing("POST", "/v1/services/"+id+"/backups?wait=20", nil))
	backupID := op["result"].(map[string]any)["backup"].(map[string]any)["id"].(string)
	body, _ := json.Marshal(map[string]string{"backup_id": backupID})
	in := h.billing("POST", "/v1/services/"+id+"/restore/preview?wait=10", body).json(t)["intent"].(map[string]any)
	if in["state"] != "preview_ready" {
		t.Fatalf("preview %v", in)
	}
	before := len(h.sim.Requests())
	apply, _ := json.Marshal(map[string]any{"intent_id": in["id"], "confirmations": in["confirmations"]})
	finished(t, h, h.billing("POST", "/v1/services/"+id+"/restore?wait=20", apply))
	var addsAfter int
	for _, r := range h.sim.Requests()[before:] {
		if r.Method == "POST" && strings.Contains(r.Path, "/ipset/"+kinds.IPFilterSet) {
			addsAfter++
		}
	}
	if addsAfter == 0 {
		t.Fatal("the restore wrote nothing into ipfilter-net0")
	}
	checkGuestIPv6(t, h, "container", vmid)
}

// R54: a change of plan to a plan with an ip6_pool assigns the service a prefix and writes it
// on the existing guest (net0 keeping its MAC, ipconfig0) and into ipfilter-net0; a change back
// releases it.
func TestIPv6ChangePlanOverHTTP(t *testing.T) {
	for _, k := range []struct{ kind, from, to string }{{"container", "ct-1g", "ct-v6"}, {"vm", "vm-2g", "vm-v6"}} {
		t.Run(k.kind, func(t *testing.T) {
			h := newServicesHarness(t, "sqlite")
			ipv6Plans(t, h)
			id := "v6-cp-" + k.kind
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, k.from)))
			svc := h.service(id)
			vmid := int(svc["vmid"].(float64))
			if svc["ipv6"] != nil {
				t.Fatalf("ipv6 before %v", svc["ipv6"])
			}
			g, _ := h.sim.Guest(vmid)
			net0 := g.Config["net0"]
			succeeded(t, h.billing("POST", "/v1/services/"+id+"/change-plan?wait=20", []byte(`{"plan":"`+k.to+`"}`)))
			checkGuestIPv6(t, h, k.kind, vmid)
			if v6, _ := h.service(id)["ipv6"].(map[string]any); v6 == nil || v6["prefix"] != "2001:db8::/64" {
				t.Fatalf("ipv6 after change-plan %v", v6)
			}
			g, _ = h.sim.Guest(vmid)
			mac := func(s string) string {
				for _, part := range strings.Split(s, ",") {
					if k, v, _ := strings.Cut(part, "="); k == "hwaddr" || k == "macaddr" || k == "virtio" {
						return v
					}
				}
				return ""
			}
			if mac(g.Config["net0"]) != mac(net0) || mac(net0) == "" {
				t.Fatalf("net0 MAC changed: %q → %q", net0, g.Config["net0"])
			}
			succeeded(t, h.billing("POST", "/v1/services/"+id+"/change-plan?wait=20", []byte(`{"plan":"`+k.from+`"}`)))
			if s := h.service(id); s["ipv6"] != nil {
				t.Fatalf("ipv6 after changing back %v", s["ipv6"])
			}
			g, _ = h.sim.Guest(vmid)
			if strings.Contains(g.Config["net0"]+g.Config["ipconfig0"], "ip6=") {
				t.Fatalf("ip6 left on the guest: %v", g.Config)
			}
		})
	}
}
