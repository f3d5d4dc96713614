package provision_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The container create body is the short one (R5–R7): swap sent even when 0, rootfs in
// allocation form, unprivileged=1, no arch or features; the password reaches Proxmox and is in
// no table and no log line.
// R5–R7 and R12: the container create body is exactly the short list, in container words only.
func TestContainerCreateBody(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.create(ctReq("svc-ct-1"))
			creates := e.requests("POST", "/lxc")
			if len(creates) != 1 {
				t.Fatalf("%d container creates, want 1", len(creates))
			}
			f := creates[0].Form
			var keys []string
			for k := range f {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := []string{"cores", "description", "hostname", "memory", "net0", "ostemplate", "password", "rootfs",
				"ssh-public-keys", "swap", "tags", "unprivileged", "vmid"}
			if strings.Join(keys, ",") != strings.Join(want, ",") {
				t.Fatalf("create keys %v, want %v", keys, want)
			}
			check := map[string]string{"swap": "0", "rootfs": "local-lvm:8", "unprivileged": "1", "cores": "1",
				"memory": "512", "password": testPassword, "tags": "pvebill",
				"ostemplate": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
				"net0":       "name=eth0,bridge=vmbr0,firewall=1,ip=dhcp"}
			for k, v := range check {
				if got := f.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if !strings.Contains(f.Get("description"), "pvebill-service: whmcs/svc-ct-1") {
				t.Errorf("description %q lacks the stamp", f.Get("description"))
			}
			svc := e.service("svc-ct-1")
			if svc.State != models.ServiceActive || svc.VMID == nil || svc.Node == "" {
				t.Fatalf("service %+v", svc)
			}
			if f.Get("vmid") != strconv.Itoa(*svc.VMID) {
				t.Errorf("vmid %s, service has %d", f.Get("vmid"), *svc.VMID)
			}
			g, ok := e.sim.Guest(*svc.VMID)
			if !ok || g.Status != "running" {
				t.Fatalf("guest %+v", g)
			}
			if g.Firewall["enable"] != "1" || g.Firewall["ipfilter"] != "1" {
				t.Errorf("firewall %v", g.Firewall)
			}
			if !strings.Contains(g.Config["net0"], "firewall=1") {
				t.Errorf("net0 %q", g.Config["net0"])
			}
			for _, r := range e.sim.Requests() {
				if strings.HasSuffix(r.Path, "/status/suspend") {
					t.Errorf("suspend path sent: %s", r.Path)
				}
			}
			assertNoSecret(t, e)
		})
	}
}

// assertNoSecret checks that the root password is in no table row and no log line.
func assertNoSecret(t *testing.T, e *env) {
	t.Helper()
	if strings.Contains(e.logs.String(), testPassword) {
		t.Error("the root password is in the log")
	}
	for _, table := range []string{"services", "operations", "audit_events", "idempotency_keys"} {
		rows := dbtest.TableRows(t, e.db, table)
		for _, r := range rows {
			for k, v := range r {
				if strings.Contains(fmt.Sprintf("%s", v), testPassword) {
					t.Errorf("the root password is in %s.%s", table, k)
				}
				if b, ok := v.([]byte); ok && strings.Contains(string(b), testPassword) {
					t.Errorf("the root password is in %s.%s", table, k)
				}
			}
		}
	}
}
