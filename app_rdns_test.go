package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/server/config"
)

// R55 wiring: the app built from a config with dns.powerdns serves the reverse DNS routes with
// PowerDNS behind them (a service that does not exist is 404, not a refusal of reverse DNS);
// without dns.powerdns the same PUT is 409 capability_refused, permanent.
func TestAppWiresReverseDNS(t *testing.T) {
	for _, c := range []struct {
		name   string
		dns    config.PowerDNS
		status int
		code   string
	}{
		{"configured", config.PowerDNS{URL: "http://127.0.0.1:9", APIKey: "pdns-key-0123"}, 404, "not_found"},
		{"off", config.PowerDNS{}, 409, "capability_refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim := simtest.Start(t, nil)
			cfg := config.Defaults()
			cfg.Database = config.Database{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "app.db")}
			cfg.Clients = []config.Client{{ID: "whmcs", Secret: replicaSecret, Scopes: []string{"billing", "admin"}}}
			cfg.Clusters = []config.Cluster{{Name: "default", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret}}
			cfg.Executor.PollInterval = 20 * time.Millisecond
			cfg.DNS.PowerDNS = c.dns
			_, base := serveApp(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), withoutPlans)
			status, m := signedCall(t, base, "PUT", "/v1/services/none-1/rdns",
				[]byte(`{"address":"203.0.113.10","hostname":"mail.example.com"}`))
			if status != c.status || m["code"] != c.code {
				t.Fatalf("PUT: %d %v, want %d %s", status, m, c.status, c.code)
			}
		})
	}
}
