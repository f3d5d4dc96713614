package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pvebill/modules/stack"

	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/server/config"
)

// buildApp wires a Proxmox client per configured cluster, the guest modules, the lifecycle
// actions and the limits job: a signed create through the HTTP API ends with a running
// container, the readiness details name the cluster and its datacenter firewall, and the
// client's metrics are on the app's registry.
func TestAppWiresTheLifecycle(t *testing.T) {
	sim := simtest.Start(t, nil)
	sim.SetClusterFirewall(true)
	cfg := config.Defaults()
	cfg.Database = config.Database{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "app.db")}
	cfg.Clients = []config.Client{{ID: "whmcs", Secret: replicaSecret, Scopes: []string{"billing", "admin"}}}
	cfg.Clusters = []config.Cluster{{Name: "default", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret}}
	cfg.Executor.PollInterval = 20 * time.Millisecond
	_, base := serveApp(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), withExamplePlans)
	call := func(method, path string, body []byte) (int, map[string]any) {
		t.Helper()
		return signedCall(t, base, method, path, body)
	}
	status, m := call("POST", "/v1/services?wait=20", []byte(`{"service_id":"app-1","plan":"ct-2g","hostname":"app.example.com","os":"debian-12","root_password":"app-pass-1234"}`))
	if status != 200 || m["operation"].(map[string]any)["state"] != "succeeded" {
		t.Fatalf("create: %d %v", status, m)
	}
	status, m = call("GET", "/v1/services/app-1", nil)
	if svc, _ := m["service"].(map[string]any); status != 200 || svc["power"] != "running" {
		t.Fatalf("service: %d %v", status, m)
	}
	status, m = call("GET", "/v1/plans/ct-2g", nil)
	caps, _ := m["plan"].(map[string]any)["capabilities"].(map[string]any)["container"].(map[string]any)
	for _, c := range []string{"create", "suspend", "unsuspend", "terminate", "change_plan", "reinstall"} {
		if st, _ := caps[c].(map[string]any); status != 200 || st["available"] != true {
			t.Errorf("capability %s: %v", c, caps[c])
		}
	}
	if st, _ := caps["pause"].(map[string]any); st["refusal"] != "permanent" {
		t.Errorf("container pause: %v", caps["pause"])
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"datacenter_firewall":"enabled"`) {
		t.Fatalf("readyz %s", body)
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"pvebill_datacenter_firewall_enabled{cluster=\"default\"} 1", "pvebill_proxmox_"} {
		if !strings.Contains(string(body), name) {
			t.Errorf("metrics lack %s", name)
		}
	}
}

// appPlans says whether serveApp loads the example plans.
type appPlans bool

const (
	withExamplePlans appPlans = true
	withoutPlans     appPlans = false
)

// serveApp builds the app from cfg, loads the example plans when asked, and serves it on a
// loopback port until the test ends (a serve error fails the test). It returns the app and the
// base URL.
func serveApp(t *testing.T, cfg config.Config, log *slog.Logger, plans appPlans) (*app, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	a, err := buildApp(ctx, cfg, log, stack.MigrateSchema)
	if err == nil && plans {
		err = a.loadExamplePlans(ctx)
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return a, "http://" + ln.Addr().String()
}
