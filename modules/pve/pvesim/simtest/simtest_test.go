package simtest

import (
	"net/http"
	"strings"
	"testing"

	"pvebill/modules/pve/pvesim"
)

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, _ ...any) {
	r.errs = append(r.errs, format)
}
func (r *recorder) Helper() {}

func call(t *testing.T, s *Server, method, path, body string) {
	req, _ := http.NewRequest(method, s.URL+"/api2/json"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "PVEAPIToken="+TokenID+"="+TokenSecret)
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// The guard sees a schema violation, a container suspend and a QEMU path for a container.
func TestCheckCatchesViolations(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: TokenID, TokenSecret: TokenSecret})
	// The end-of-test check reports into a recorder, so this test can look at what it found.
	s := Start(&recorder{TB: t}, sim)
	call(t, s, "GET", "/cluster/nextid?bogus=1", "")
	rec := &recorder{TB: t}
	Check(rec, sim)
	if len(rec.errs) != 1 {
		t.Fatalf("schema violation: %d errors", len(rec.errs))
	}
	sim.ResetLog()
	if err := sim.SeedGuest(pvesim.Guest{VMID: 7001, Type: "lxc", Node: "pve1", Running: true,
		Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:vm-7001-disk-0,size=8G", "memory": "512"}}); err != nil {
		t.Fatal(err)
	}
	call(t, s, "GET", "/nodes/pve1/lxc/7001/status/current", "")
	call(t, s, "POST", "/nodes/pve1/lxc/7001/status/suspend", "")
	call(t, s, "GET", "/nodes/pve1/qemu/7001/agent/info", "")
	got := R13Breaches(sim)
	if len(got) != 2 {
		t.Fatalf("R13 breaches: %v", got)
	}
}
