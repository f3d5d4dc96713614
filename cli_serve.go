package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"pvebill/modules/stack"
	"slices"

	"gopkg.in/yaml.v3"

	"pvebill/models"
	"pvebill/modules/pve/pvesim"
	"pvebill/server/config"
)

// Embedded default (no --config): everything under this directory, and the simulator's token
// (a placeholder: the simulator is in-process and answers only on loopback).
const (
	demoDir         = "data"
	demoTokenID     = "pvebill@pve!provision"
	demoTokenSecret = "00000000-0000-0000-0000-000000000000"
	// simMaxLog bounds a long-running simulator's request log (oldest entries dropped first).
	simMaxLog = 100_000
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file (omit for the embedded default: SQLite + built-in simulator)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var (
		cfg    config.Config
		err    error
		schema = stack.RequireSchema
		banner func(addr string)
	)
	if *cfgPath != "" {
		if cfg, err = config.Load(*cfgPath, os.Environ()); err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return 1
		}
		// A relative plans_file is relative to the config file, as its neighbour.
		if cfg.PlansFile != "" && !filepath.IsAbs(cfg.PlansFile) {
			cfg.PlansFile = filepath.Join(filepath.Dir(*cfgPath), cfg.PlansFile)
		}
	} else {
		var closeSim func()
		cfg, banner, closeSim, err = embeddedDefault(ctx, stdout)
		if err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return 1
		}
		defer closeSim()
		schema = stack.MigrateSchema
	}
	log := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	a, err := buildApp(ctx, cfg, log, schema)
	if err != nil {
		var behind *models.ErrSchemaBehind
		if errors.As(err, &behind) {
			_, _ = fmt.Fprintln(stderr, "pvebill serve:", err)
			return 3
		}
		_, _ = fmt.Fprintln(stderr, "pvebill serve:", err)
		return 1
	}
	if *cfgPath == "" {
		if err := a.loadExamplePlans(ctx); err != nil {
			_, _ = fmt.Fprintln(stderr, "pvebill serve:", err)
			if cerr := a.db.Close(); cerr != nil {
				log.Warn("close database", "err", cerr)
			}
			return 1
		}
	}
	ln, err := listen(ctx, cfg.Listen)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill serve:", err)
		return 1
	}
	if banner != nil {
		banner(ln.Addr().String())
	}
	if err := a.serve(ctx, ln); err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill serve:", err)
		return 1
	}
	return 0
}

// embeddedDefault builds the zero-setup configuration: SQLite under ./data, the Proxmox
// simulator in-process with a seeded demo cluster, a demo client with a fresh secret written to
// data/demo.yaml so that `pvebill call --config data/demo.yaml` works against this server.
func embeddedDefault(ctx context.Context, stdout io.Writer) (config.Config, func(string), func(), error) {
	cfg := config.Defaults()
	if err := ownerOnlyDir(demoDir); err != nil {
		return cfg, nil, nil, err
	}
	cfg.LogFormat = "text"
	cfg.Database = config.Database{Driver: "sqlite", DSN: filepath.Join(demoDir, "pvebill.db")}
	secret := randomHex(24)
	cfg.Clients = []config.Client{{ID: "demo", Secret: secret, Scopes: []string{config.ScopeBilling, config.ScopeStorefront, config.ScopeAdmin}}}

	consolePassword := randomHex(16)
	simOpts := pvesim.Options{TokenID: demoTokenID, TokenSecret: demoTokenSecret, MaxLog: simMaxLog,
		ConsoleUser: pvesim.DefaultConsoleUser, ConsolePassword: consolePassword}
	sim := demoSim(simOpts)
	simLn, err := listen(ctx, "127.0.0.1:0")
	if err != nil {
		return cfg, nil, nil, err
	}
	simSrv := &http.Server{Handler: sim}
	go simSrv.Serve(simLn) //nolint:errcheck // closed on exit
	cfg.Clusters = []config.Cluster{{Name: "default", URL: "http://" + simLn.Addr().String(),
		TokenID: demoTokenID, TokenSecret: demoTokenSecret,
		ConsoleUser: pvesim.DefaultConsoleUser, ConsolePassword: consolePassword}}
	cfg.Console.Secret = randomHex(32)
	if err := config.ApplyEnv(&cfg, os.Environ()); err != nil {
		return cfg, nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, nil, err
	}
	closeSim := func() { _ = simSrv.Close() } // on exit: nothing is left to tell
	banner := func(addr string) {
		callCfg := config.Config{Listen: addr, Clients: cfg.Clients}
		raw, _ := yaml.Marshal(struct {
			Listen  string          `yaml:"listen"`
			Clients []config.Client `yaml:"clients"`
		}{callCfg.Listen, callCfg.Clients})
		path := filepath.Join(demoDir, "demo.yaml")
		if err := writeOwnerOnly(path, raw); err != nil {
			_, _ = fmt.Fprintln(stdout, "could not write", path, err)
		}
		_, _ = fmt.Fprintf(stdout, `
pvebill is running on its embedded default:
  API            %s://%s
  database       SQLite, %s
  Proxmox VE     built-in simulator at http://%s (demo cluster "default")
  API client     id "demo", secret in %s (a new one each start)

Try a signed call from another terminal:
  go run . call --config %s GET /v1/plans

`, scheme(cfg.TLS), addr, cfg.Database.DSN, simLn.Addr(), path, path)
	}
	return cfg, banner, closeSim, nil
}

// demoSim is the simulator seeded with the demo cluster, configured as a production cluster
// should be: the datacenter firewall on, so that the guests' anti-spoofing applies (R9).
func demoSim(opts pvesim.Options) *pvesim.Sim {
	sim := pvesim.Demo(opts)
	sim.SetClusterFirewall(true)
	return sim
}

// readinessAttrs are the log fields of one cluster's readiness: the cluster, then each detail
// (proxmox, datacenter_firewall) as a field of its own, in a stable order.
func readinessAttrs(name string, detail any) []any {
	attrs := []any{"cluster", name}
	d, ok := detail.(map[string]any)
	if !ok {
		return append(attrs, "detail", detail)
	}
	for _, k := range slices.Sorted(maps.Keys(d)) {
		attrs = append(attrs, k, d[k])
	}
	return attrs
}

// listen opens a TCP listener on addr.
func listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func cmdMigrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" {
		_, _ = fmt.Fprintln(stderr, "usage: pvebill migrate --config FILE")
		return 2
	}
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 1
	}
	db, err := models.Open(cfg.Database.Driver, cfg.Database.DSN, cfg.Database.Failover...)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill migrate:", err)
		return 1
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			_, _ = fmt.Fprintln(stderr, "pvebill migrate: close database:", cerr)
		}
	}()
	applied, err := db.Migrate(context.Background())
	for _, name := range applied {
		_, _ = fmt.Fprintln(stdout, "applied", name)
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill migrate:", err)
		return 1
	}
	if len(applied) == 0 {
		_, _ = fmt.Fprintln(stdout, "schema is up to date")
	}
	return 0
}

func cmdSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8006", "address to listen on")
	empty := fs.Bool("empty", false, "start with an empty cluster instead of the seeded demo")
	seed := fs.Int64("seed", 1, "seed for the simulated usage figures")
	major := fs.Int("pve-major", 9, "Proxmox VE major version to imitate (8 or 9)")
	maxLog := fs.Int("max-log", simMaxLog, "request log entries kept (oldest dropped first)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts := pvesim.Options{Seed: *seed, PVEMajor: *major, TokenID: demoTokenID, TokenSecret: demoTokenSecret, MaxLog: *maxLog}
	sim := demoSim(opts)
	if *empty {
		sim = pvesim.New(opts)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill sim:", err)
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "Proxmox VE simulator on http://%s/api2/json (token %s, control API /_sim/)\n", ln.Addr(), demoTokenID)
	srv := &http.Server{Handler: sim}
	go func() { <-ctx.Done(); _ = srv.Close() }() // Serve returns ErrServerClosed next
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_, _ = fmt.Fprintln(stderr, "pvebill sim:", err)
		return 1
	}
	return 0
}
