package pve

import (
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	sim, c := newSimWith(t, m)
	ctx := testContext(t)
	ct := c.Node("pve1").LXC(200)

	must(ct.Status(ctx))(t)
	must(ct.Status(ctx))(t)
	mustOK(ct.Stop(ctx))(t)
	if _, err := c.Node("pve1").LXC(5999).Config(ctx); !isKind(err, ErrNotFound) {
		t.Fatalf("missing container: %v", err)
	}
	must(c.Cluster().Resources(ctx, ResourceVM))(t)
	_ = sim

	// A network failure is counted with code "error".
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := testConfig("http://" + addr)
	cfg.MaxRetries = -1
	down := newTestClient(t, cfg, m)
	if _, err := down.Node("pve2").QEMU(300).Status(t.Context()); !isKind(err, ErrTransient) {
		t.Fatalf("refused connection: %v", err)
	}

	count := func(node, endpoint, code string) float64 {
		return testutil.ToFloat64(m.requests.WithLabelValues("test", node, endpoint, code))
	}
	if got := count("pve1", "/nodes/{node}/lxc/{vmid}/status/current", "200"); got != 2 {
		t.Errorf("status/current 200: %v", got)
	}
	if got := count("pve1", "/nodes/{node}/lxc/{vmid}/config", "500"); got != 1 {
		t.Errorf("config 500: %v", got)
	}
	if got := count("", "/cluster/resources", "200"); got != 1 {
		t.Errorf("cluster resources: %v", got)
	}
	if got := count("pve1", "/nodes/{node}/tasks/{upid}/status", "200"); got < 1 {
		t.Errorf("task status polls: %v", got)
	}
	if got := count("pve2", "/nodes/{node}/qemu/{vmid}/status/current", "error"); got != 1 {
		t.Errorf("network failure: %v", got)
	}

	// Every endpoint label is a template: no vmid, UPID or node name.
	template := regexp.MustCompile(`^(/([a-z_-]+|\{[a-z]+\}))+$`)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, mf := range families {
		for _, metric := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			ep := labels["endpoint"]
			if !template.MatchString(ep) || strings.Contains(ep, "pve1") || strings.Contains(ep, "UPID") {
				t.Errorf("%s: endpoint label %q is not a template", mf.GetName(), ep)
			}
			if n := labels["node"]; n != "" && n != "pve1" && n != "pve2" {
				t.Errorf("%s: node label %q", mf.GetName(), n)
			}
			if labels["cluster"] != "test" {
				t.Errorf("%s: cluster label %q", mf.GetName(), labels["cluster"])
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no series gathered")
	}
	if n := testutil.CollectAndCount(m.duration, "pvebill_proxmox_request_duration_seconds"); n == 0 {
		t.Error("no duration series")
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) != 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.observe("c", "/nodes/pve1/status", 200, 0) // must not panic
	if NewMetrics(nil) == nil {
		t.Error("NewMetrics(nil) returned nil")
	}
}
