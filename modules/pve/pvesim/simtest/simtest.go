package simtest

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
)

// Token is the simulator's API token used by Start.
const (
	TokenID     = "pvebill@pve!provision"
	TokenSecret = "00000000-0000-0000-0000-000000000000"
	// ConsoleUser and ConsolePassword log in for consoles (R41).
	ConsoleUser     = pvesim.DefaultConsoleUser
	ConsolePassword = pvesim.DefaultConsolePassword
)

// Server is a running simulator.
type Server struct {
	*pvesim.Sim
	URL  string
	HTTP *httptest.Server
}

// Start serves sim over HTTP until the test ends, then fails the test on any schema violation
// or R13 breach recorded in its request log. A nil sim starts pvesim.Demo.
func Start(t testing.TB, sim *pvesim.Sim) *Server {
	t.Helper()
	if sim == nil {
		sim = pvesim.Demo(pvesim.Options{TokenID: TokenID, TokenSecret: TokenSecret})
	}
	srv := httptest.NewServer(sim)
	s := &Server{Sim: sim, URL: srv.URL, HTTP: srv}
	t.Cleanup(func() {
		srv.Close()
		Check(t, sim)
	})
	return s
}

// lxcQEMU lists the QEMU-only paths; a container's vncwebsocket is not one of them, since its
// terminal (termproxy) is reached through it (docs/proxmox.md §14).
var (
	lxcPath  = regexp.MustCompile(`^/nodes/[^/]+/lxc/(\d+)(/|$)`)
	qemuPath = regexp.MustCompile(`^/nodes/[^/]+/qemu/(\d+)(/|$)`)
	lxcPause = regexp.MustCompile(`^/nodes/[^/]+/lxc/\d+/status/(suspend|resume)$`)
	lxcQEMU  = regexp.MustCompile(`^/nodes/[^/]+/lxc/\d+/(agent|vncproxy|spiceproxy|monitor|sendkey|cloudinit)`)
)

// Check fails t on every schema violation and every R13/R15 breach in sim's log so far.
func Check(t testing.TB, sim *pvesim.Sim) {
	t.Helper()
	for _, v := range sim.SchemaViolations() {
		t.Errorf("request refused by the Proxmox schema (R: the client must only send what Proxmox accepts): %s", v)
	}
	for _, msg := range R13Breaches(sim) {
		t.Errorf("R13: %s", msg)
	}
}

// R13Breaches lists QEMU-only calls made for a container and container suspend/resume calls.
func R13Breaches(sim *pvesim.Sim) []string {
	containers := map[int]bool{}
	reqs := sim.Requests()
	for _, r := range reqs {
		if m := lxcPath.FindStringSubmatch(r.Path); m != nil {
			id, _ := strconv.Atoi(m[1])
			containers[id] = true
		}
		if r.Method == http.MethodPost && r.Path == "/nodes/"+r.Node+"/lxc" {
			if id, err := strconv.Atoi(r.Form.Get("vmid")); err == nil {
				containers[id] = true
			}
		}
	}
	var out []string
	for _, r := range reqs {
		if lxcPause.MatchString(r.Path) || lxcQEMU.MatchString(r.Path) {
			out = append(out, r.Method+" "+r.Path+" (a container has no such operation)")
		}
		if m := qemuPath.FindStringSubmatch(r.Path); m != nil {
			id, _ := strconv.Atoi(m[1])
			if containers[id] {
				out = append(out, r.Method+" "+r.Path+" (QEMU path for container "+m[1]+")")
			}
		}
	}
	return out
}

// Client returns a Proxmox client for the server with timings scaled for tests (5 s per call,
// retries 1-4 ms apart, task polls from 1 ms up to 10 ms), closed when the test ends. m may be
// nil.
func (s *Server) Client(t testing.TB, m *pve.Metrics) *pve.Client {
	t.Helper()
	c, err := pve.New(pve.Config{Cluster: "default", URL: s.URL, TokenID: TokenID, TokenSecret: TokenSecret,
		Timeout: 5 * time.Second, RetryBaseDelay: time.Millisecond, RetryMaxDelay: 4 * time.Millisecond,
		TaskPollInterval: time.Millisecond, TaskPollMaxInterval: 10 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
