package agent_test

import (
	"compress/gzip"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"pvebill/modules/agent"
	"pvebill/modules/pve"
)

// apiNode is a node of Proxmox's API schema (the simulator keeps a copy of Proxmox's apidoc).
type apiNode struct {
	Path     string                     `json:"path"`
	Children []apiNode                  `json:"children"`
	Info     map[string]json.RawMessage `json:"info"`
}

// schemaCalls lists every method and path template of Proxmox's API schema.
func schemaCalls(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open("../pve/pvesim/schema/pve-apidoc.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var tree []apiNode
	if err := json.NewDecoder(zr).Decode(&tree); err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var walk func(ns []apiNode)
	walk = func(ns []apiNode) {
		for _, n := range ns {
			for m := range n.Info {
				out = append(out, [2]string{m, n.Path})
			}
			walk(n.Children)
		}
	}
	walk(tree)
	sort.Slice(out, func(i, j int) bool { return out[i][1]+out[i][0] < out[j][1]+out[j][0] })
	return out
}

var templateVar = regexp.MustCompile(`\{([a-z0-9_-]+)\}`)

// sample fills a schema template with values of the placeholders' types.
func sample(template string) string {
	values := map[string]string{"node": "pve1", "vmid": "5001", "storage": "local", "snapname": "snap1",
		"name": "ipset1", "cidr": "10.0.0.1", "sid": "ct:5001",
		"volume": "local:backup%2Fvzdump-lxc-5001-2026_01_01-00_00_00.tar.zst",
		"upid":   "UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzstart:5001:svc@pve!provision:"}
	return templateVar.ReplaceAllStringFunc(template, func(v string) string {
		if x, ok := values[v[1:len(v)-1]]; ok {
			return x
		}
		return "x1"
	})
}

// R57: every call of Proxmox's API schema that pvebill's route table does not hold is refused
// by the agent, as a plain request and as a WebSocket upgrade, with 403 agent_refused, and none
// reaches Proxmox; among them the ones a compromised pvebill would want most.
func TestAgentRefusesEveryCallOffTheTable(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	s.startAgent(t, agent.Options{})
	tr := s.hub.Transport("c1")
	refused, allowed := 0, 0
	for _, call := range schemaCalls(t) {
		method, path := call[0], sample(call[1])
		for _, kind := range []pve.Stream{pve.PlainCall, pve.UpgradeCall} {
			if r, err := pve.MatchRoute(method, path, kind); err == nil && !r.Direct {
				allowed++
				continue
			}
			if status, reason := send(t, tr, method, path, kind == pve.UpgradeCall); status != http.StatusForbidden || reason == "" {
				t.Errorf("%s %s (upgrade %v): %d %q, want 403 agent_refused", method, path, kind == pve.UpgradeCall, status, reason)
			}
			refused++
		}
	}
	if n := len(s.sim.Requests()); n != 0 {
		t.Fatalf("%d refused calls reached the simulator: %+v", n, s.sim.Requests()[0])
	}
	if allowed < 30 || refused < 600 {
		t.Fatalf("allowed %d, refused %d: the schema was not read", allowed, refused)
	}
	for _, must := range [][2]string{{"POST", "/nodes/pve1/execute"}, {"POST", "/access/ticket"}, {"GET", "/access/users"},
		{"PUT", "/cluster/config"}, {"POST", "/cluster/config/nodes/pve2"}, {"POST", "/nodes/pve1/storage/local/upload"},
		{"POST", "/nodes/pve1/termproxy"}, {"POST", "/nodes/pve1/vncshell"}, {"GET", "/nodes/pve1/vncwebsocket"}} {
		if status, _ := send(t, tr, must[0], must[1], false); status != http.StatusForbidden {
			t.Errorf("%s %s: %d", must[0], must[1], status)
		}
	}
	t.Logf("Proxmox API calls: %d refused, %d on pvebill's route table", refused, allowed)
}

// R57: the path is decoded segment by segment: dot segments, empty segments, encoded slashes
// where no volume id is, double encoding and a plain call on the console's upgrade route are all
// refused; a volume id's %2F inside its segment is not.
func TestAgentPathDecoding(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	s.startAgent(t, agent.Options{})
	tr := s.hub.Transport("c1")
	for _, p := range []string{
		"/nodes/pve1/lxc/5001/../../../access/users",
		"/nodes/pve1/lxc/5001/%2e%2e/%2e%2e/execute",
		"/nodes/pve1/lxc/5001/status/./current",
		"/nodes//pve1/lxc/5001/config",
		"/nodes/pve1%2Flxc%2F5001/config",
		"/nodes/pve1/lxc/5001%252Fconfig",
		"/nodes/pve1/storage/local/content/local:backup%252F..%252Fx",
		"/nodes/pve1/storage/local/content/local:backup%2F..%2F..%2Fetc",
		"/nodes/pve1/lxc/05001/config",
		"/nodes/pve1/lxc/5001/vncwebsocket",
	} {
		if status, reason := send(t, tr, http.MethodGet, p, false); status != http.StatusForbidden {
			t.Errorf("GET %s: %d %q, want 403", p, status, reason)
		}
	}
	if n := len(s.sim.Requests()); n != 0 {
		t.Fatalf("%d refused calls reached the simulator", n)
	}
	ok := "/nodes/pve1/storage/local/content/local:backup%2Fvzdump-lxc-5001-2026_01_01-00_00_00.tar.zst"
	if status, reason := send(t, tr, http.MethodGet, ok, false); status == http.StatusForbidden {
		t.Fatalf("a volume id was refused: %s", reason)
	}
}

// send sends one call through the tunnel as pvebill's transport would and returns the status
// and the refusal reason.
func send(t *testing.T, tr http.RoundTripper, method, path string, upgrade bool) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, "https://proxmox.agent.invalid"+pve.APIBasePath+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(path, "%"); i >= 0 {
		req.URL.RawPath = pve.APIBasePath + path
	}
	if upgrade {
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Sec-WebSocket-Version", "13")
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(pve.HeaderAgentRefused)
}
