package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest/poll"
)

// readyzCluster is /readyz's answer and the default cluster's detail in it.
func readyzCluster(t *testing.T, h *svcHarness) (response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.http.URL+"/readyz", nil)
	r := h.do(req)
	var body struct {
		Checks struct {
			Clusters map[string]map[string]any `json:"clusters"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("readyz %s: %v", r.Body, err)
	}
	return r, body.Checks.Clusters["default"]
}

// R50: while Proxmox hangs (the simulator's control API injects a fault that never answers the
// firewall options the check reads), /readyz answers at once every time — half of the answers
// within 100 ms and none over 500 ms, while the hung check lasts 2 s (the database ping it still
// makes shares SQLite's one connection with the executor, which a loaded machine can delay by
// a tenth of a second) — ready, with the last known state of the cluster and its growing age;
// once the hung check gives up, the cluster is reported unreachable, still at once.
func TestReadyzNeverWaitsOnProxmox(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	h.sim.SetClusterFirewall(true)
	h.st.Readiness.Check(t.Context())
	_, first := readyzCluster(t, h)
	if first["proxmox"] != "ok" || first["datacenter_firewall"] != "enabled" || first["checked_at"] == nil {
		t.Fatalf("first check %v", first)
	}
	fault := []byte(`{"method":"GET","path_pattern":"/cluster/firewall/options","hang":true}`)
	resp, err := http.Post(h.sim.URL+"/_sim/faults", "application/json", bytes.NewReader(fault))
	if err != nil {
		t.Fatal(err)
	}
	var injected struct {
		ID int `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&injected)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || injected.ID == 0 {
		t.Fatalf("inject fault: %d %v", resp.StatusCode, err)
	}
	// The background check starts at once and hangs for its whole interval.
	stop := h.st.StartReadiness(t.Context(), 2*time.Second)
	defer stop()
	defer h.sim.ClearFaults()
	// The answers below are read while the check is held inside Proxmox, not before it asked.
	poll.Until(t, 5*time.Second, "the background check to hang in the simulator", func() bool {
		return h.sim.FaultFired(injected.ID) > 0
	})
	lastAge := -1.0
	var took []time.Duration
	for i := range 20 {
		start := time.Now()
		r, cl := readyzCluster(t, h)
		took = append(took, time.Since(start))
		if took[i] > 500*time.Millisecond {
			t.Fatalf("readyz %d took %v", i, took[i])
		}
		if r.Status != 200 || cl["proxmox"] != "ok" || cl["checked_at"] != first["checked_at"] {
			t.Fatalf("readyz %d: %d %v, want the first check's state", i, r.Status, cl)
		}
		age, _ := cl["age_seconds"].(float64)
		if age < lastAge {
			t.Fatalf("age went back from %v to %v", lastAge, age)
		}
		lastAge = age
	}
	slices.Sort(took)
	if took[len(took)/2] > 100*time.Millisecond {
		t.Fatalf("median answer %v, times %v", took[len(took)/2], took)
	}
	// The age grows while the check hangs: a later answer, still the first check's state, is
	// older than the last of the twenty (the age counts in milliseconds).
	poll.Until(t, 5*time.Second, "the age to grow", func() bool {
		r, cl := readyzCluster(t, h)
		if r.Status != 200 || cl["proxmox"] != "ok" || cl["checked_at"] != first["checked_at"] {
			t.Fatalf("readyz: %d %v, want the first check's state", r.Status, cl)
		}
		age, _ := cl["age_seconds"].(float64)
		return age > lastAge
	})
	poll.Until(t, 5*time.Second, "the hung check to end", func() bool {
		start := time.Now()
		r, cl := readyzCluster(t, h)
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Fatalf("readyz took %v", took)
		}
		if cl["proxmox"] != "unreachable" {
			return false
		}
		if r.Status != 200 || cl["datacenter_firewall"] != "unknown" {
			t.Fatalf("after the hung check: %d %v", r.Status, cl)
		}
		return true
	})
}
