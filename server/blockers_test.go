package server_test

import (
	"encoding/json"
	"testing"

	"pvebill/models/dbtest"
)

// R25: a terminate of a protected guest ends failed with code blocked, and the operation's
// error lists the blocker the run found and says that asking again may help (the protection can
// be lifted), on the answer and on GET /v1/operations/{id}, in a shape openapi.yaml describes.
func TestTerminateBlockersListed(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			conform := openAPIChecker(t)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("prot-1", "ct-1g")))
			vmid := int(h.service("prot-1")["vmid"].(float64))
			if err := h.sim.SetConfig(vmid, "protection", "1"); err != nil {
				t.Fatal(err)
			}
			r := h.billing("POST", "/v1/services/prot-1/terminate?wait=20", nil)
			conform("POST", "/v1/services/prot-1/terminate", r, 200)
			op := operationOf(t, r, 200)
			want := `{"code":"blocked","detail":"The action is blocked; see the listed blockers.","permanence":"temporary",` +
				`"blockers":[{"code":"protection_enabled","message":"Protection is enabled on the guest; Proxmox refuses to destroy it."}]}`
			if got := errorJSON(t, r.Body); op["state"] != "failed" || got != want {
				t.Fatalf("terminate: state %v, error\n%s\nwant\n%s", op["state"], got, want)
			}
			path := "/v1/operations/" + op["id"].(string)
			again := h.billing("GET", path, nil)
			conform("GET", path, again, 200)
			if got := errorJSON(t, again.Body); got != want {
				t.Fatalf("GET operation: error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// errorJSON is the operation's error object of an {"operation": …} answer, as sent.
func errorJSON(t *testing.T, body []byte) string {
	t.Helper()
	var doc struct {
		Operation struct {
			Error json.RawMessage `json:"error"`
		} `json:"operation"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return string(doc.Operation.Error)
}
