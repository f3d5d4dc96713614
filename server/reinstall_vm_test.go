package server_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
)

// R30 through HTTP on both databases: a VM reinstall is a re-clone. A VM of plan vm-2g, with
// another guest's disk attached by hand, is previewed (its disks labelled, nothing changed) and
// applied with the preview's confirmations and a new root password. The simulator must have
// received, in this order: stop, destroy (without destroy-unreferenced-disks, R17), a clone of
// the plan's template 9000 onto the same vmid, the clone's configuration with the new password
// in cloud-init, start — and no container path at any time (R12, R13). The VM reads back
// running at the same vmid with the service's stamp and address, the service keeps its vmid,
// the intent ends completed on read, every answer conforms to openapi.yaml, the password is in
// no answer, log line or table (R26), and a second apply of the used intent is preview_stale
// and sends no destroy.
func TestVMReinstallOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			check := openAPIChecker(t)
			id := "whmcs-vm-reinstall"
			base := "/v1/services/" + id
			var answers [][]byte

			r := h.billing("POST", "/v1/services?wait=20", createBody(id, "vm-2g"))
			check("POST", "/v1/services", r, 200)
			succeeded(t, r)
			r = h.billing("GET", base, nil)
			check("GET", base, r, 200)
			svc := r.json(t)["service"].(map[string]any)
			if svc["guest_type"] != "vm" || svc["state"] != "active" || svc["vmid"] == nil {
				t.Fatalf("service after create %s", r.Body)
			}
			vmid := int(svc["vmid"].(float64))
			ips := fmt.Sprint(svc["ip_addresses"])
			// Another guest's disk, attached by hand: the preview must show it excluded, and the
			// re-clone must leave its volume alone and the new VM without it.
			if err := h.sim.SetConfig(vmid, "scsi1", "local-lvm:vm-6002-disk-1,size=1G"); err != nil {
				t.Fatal(err)
			}

			// Phase 1 only reads.
			mark := len(h.sim.Requests())
			r = h.billing("POST", base+"/reinstall/preview?wait=10", []byte(`{}`))
			check("POST", base+"/reinstall/preview", r, 200)
			answers = append(answers, r.Body)
			in := r.json(t)["intent"].(map[string]any)
			if in["state"] != "preview_ready" || in["guest_type"] != "vm" || in["vmid"] != float64(vmid) ||
				len(in["blockers"].([]any)) != 0 || in["boot_disk"] == nil || in["rootfs"] != nil {
				t.Fatalf("preview %s", r.Body)
			}
			var labels []string
			for _, d := range in["disks"].([]any) {
				dm := d.(map[string]any)
				labels = append(labels, fmt.Sprintf("%s:%s:%s", dm["key"], dm["data"], dm["mount_after"]))
			}
			if got, want := strings.Join(labels, " "), "scsi0:erased:recreated scsi1:excluded:removed ide2:erased:recreated"; got != want {
				t.Fatalf("disk labels %q, want %q", got, want)
			}
			for _, req := range h.sim.Requests()[mark:] {
				if req.Method != "GET" {
					t.Errorf("the preview sent %s %s", req.Method, req.Path)
				}
			}
			intentID := in["id"].(string)

			// Phase 2.
			body, _ := json.Marshal(map[string]any{"intent_id": intentID, "root_password": reinstallPassword,
				"confirmations": in["confirmations"]})
			mark = len(h.sim.Requests())
			r = h.billing("POST", base+"/reinstall?wait=20", body)
			check("POST", base+"/reinstall", r, 200)
			answers = append(answers, r.Body)
			if op := succeeded(t, r); op["action"] != "reinstall" {
				t.Fatalf("operation %v", op)
			}
			applied := h.sim.Requests()[mark:]

			// The calls that change the guest: each sent once, in this order.
			guest := fmt.Sprintf(`^/nodes/[^/]+/qemu/%d`, vmid)
			steps := []struct {
				name, method string
				path         *regexp.Regexp
				form         func(pvesim.Request) bool
			}{
				{"stop", "POST", regexp.MustCompile(guest + `/status/(stop|shutdown)$`), nil},
				{"destroy", "DELETE", regexp.MustCompile(guest + `$`), nil},
				{"clone of template 9000 onto the same vmid", "POST", regexp.MustCompile(`^/nodes/[^/]+/qemu/9000/clone$`),
					func(req pvesim.Request) bool { return req.Form.Get("newid") == fmt.Sprint(vmid) }},
				{"configuration with the new password", "PUT", regexp.MustCompile(guest + `/config$`),
					func(req pvesim.Request) bool { return req.Form.Get("cipassword") == reinstallPassword }},
				{"start", "POST", regexp.MustCompile(guest + `/status/start$`), nil},
			}
			at := make([]int, len(steps))
			ordered := true
			for i, s := range steps {
				at[i] = -1
				for j, req := range applied {
					if req.Method != s.method || !s.path.MatchString(req.Path) {
						continue
					}
					if s.form != nil && !s.form(req) {
						ordered = false
						t.Errorf("%s: %s %s with %s", s.name, req.Method, req.Path, redactedForm(req))
						continue
					}
					if at[i] >= 0 {
						ordered = false
						t.Errorf("%s sent twice (requests %d and %d)", s.name, at[i], j)
					}
					at[i] = j
				}
				if at[i] < 0 {
					ordered = false
					t.Errorf("no %s reached the simulator", s.name)
				} else if i > 0 && at[i-1] >= 0 && at[i] < at[i-1] {
					ordered = false
					t.Errorf("%s (request %d) came before %s (request %d)", s.name, at[i], steps[i-1].name, at[i-1])
				}
			}
			if !ordered {
				for i, req := range applied {
					t.Logf("%3d %s %s %s", i, req.Method, req.Path, redactedForm(req))
				}
				t.FailNow()
			}
			if del := applied[at[1]]; del.Form.Has("destroy-unreferenced-disks") {
				t.Errorf("the reinstall destroy sent destroy-unreferenced-disks: %s", redactedForm(del))
			}

			// The VM at the same vmid: running, stamped, without the other guest's disk, whose
			// volume is still there; the service keeps its vmid and address.
			g, ok := h.sim.Guest(vmid)
			if !ok || g.Type != "qemu" || g.Status != "running" {
				t.Fatalf("guest %d after the reinstall: %+v", vmid, g)
			}
			if !descriptionHasLine(g.Config["description"], "pvebill-service: whmcs/"+id) {
				t.Errorf("guest %d description %q lacks the stamp of %s", vmid, g.Config["description"], id)
			}
			if _, ok := g.Config["scsi1"]; ok {
				t.Errorf("the re-cloned VM still has scsi1: %v", g.Config)
			}
			if !strings.Contains(strings.Join(h.sim.Volumes("local-lvm"), " "), "vm-6002-disk-1") {
				t.Error("another guest's volume was destroyed")
			}
			r = h.billing("GET", base, nil)
			check("GET", base, r, 200)
			answers = append(answers, r.Body)
			svc = r.json(t)["service"].(map[string]any)
			if svc["vmid"] != float64(vmid) || svc["state"] != "active" || svc["power"] != "running" ||
				fmt.Sprint(svc["ip_addresses"]) != ips {
				t.Errorf("service after the reinstall %s (vmid %d, addresses %s before)", r.Body, vmid, ips)
			}
			row, err := h.db.GetService(t.Context(), models.ServiceKey{ClientID: "whmcs", ServiceID: id})
			if err != nil {
				t.Fatal(err)
			}
			if row.VMID == nil || *row.VMID != vmid {
				t.Errorf("service row vmid %v, want %d", row.VMID, vmid)
			}

			// The intent advances on read.
			r = h.billing("GET", base+"/reinstall/"+intentID, nil)
			check("GET", base+"/reinstall/"+intentID, r, 200)
			answers = append(answers, r.Body)
			if got := r.json(t)["intent"].(map[string]any); got["state"] != "completed" || got["applied"] == nil {
				t.Fatalf("intent after apply %s", r.Body)
			}
			r = h.billing("GET", base+"/reinstall", nil)
			check("GET", base+"/reinstall", r, 200)
			answers = append(answers, r.Body)

			// A used intent cannot be applied again, and nothing reaches Proxmox.
			mark = len(h.sim.Requests())
			r = h.billing("POST", base+"/reinstall?wait=5", body)
			checkProblem(t, r, 409, "preview_stale")
			check("POST", base+"/reinstall", r, 409)
			answers = append(answers, r.Body)
			for _, req := range h.sim.Requests()[mark:] {
				if req.Method != "GET" {
					t.Errorf("the refused apply sent %s %s", req.Method, req.Path)
				}
			}

			// Over the whole test: never a container path, never destroy-unreferenced-disks.
			for _, req := range h.sim.Requests() {
				if strings.Contains(req.Path, "/lxc") {
					t.Errorf("a container path for a VM service: %s %s", req.Method, req.Path)
				}
				if req.Form.Has("destroy-unreferenced-disks") {
					t.Errorf("destroy-unreferenced-disks sent: %s %s", req.Method, req.Path)
				}
			}

			// R26: the password is in no answer, log line or table row.
			assertPasswordNowhere(t, h, answers)
		})
	}
}

// descriptionHasLine reports whether a guest description has line as one of its lines.
func descriptionHasLine(description, line string) bool {
	for _, l := range strings.Split(description, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// redactedForm is a request's form on one line, sorted, passwords replaced, for failure
// messages.
func redactedForm(req pvesim.Request) string {
	var parts []string
	for k, vs := range req.Form {
		for _, v := range vs {
			if k == "cipassword" || k == "password" {
				v = "(redacted)"
			}
			parts = append(parts, k+"="+strings.ReplaceAll(v, "\n", `\n`))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
