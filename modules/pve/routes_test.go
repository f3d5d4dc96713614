package pve

import (
	"errors"
	"net/http"
	"testing"
)

// R57: the client sends nothing its route table does not hold (the table an agent enforces):
// an off-table call fails before anything reaches Proxmox, so a new client call missing from
// the table fails every test that makes it.
func TestClientKeepsToItsRouteTable(t *testing.T) {
	sim, c := newSim(t)
	for _, call := range [][2]string{{http.MethodPost, "/nodes/pve1/execute"}, {http.MethodGet, "/access/users"},
		{http.MethodGet, "/nodes/pve1/lxc/5001/../../../access/users"}, {http.MethodPost, "/nodes/pve1/lxc/5001/config"}} {
		err := c.DoRequest(t.Context(), call[0], call[1], nil, nil)
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s %s: %v, want ErrNotAllowed", call[0], call[1], err)
		}
	}
	if n := len(sim.Requests()); n != 0 {
		t.Fatalf("%d off-table calls reached the simulator", n)
	}
	// The console user's login is the one direct-only call: made directly, never through an agent.
	if _, err := MatchRoute(http.MethodPost, "/access/ticket", PlainCall); err != nil {
		t.Fatalf("login: %v", err)
	}
	tc, err := New(Config{Cluster: "c1", Tunnel: http.DefaultTransport}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.checkRoute(http.MethodPost, "/access/ticket"); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("login through an agent: %v", err)
	}
}
