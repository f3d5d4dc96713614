package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/modules"
	"pvebill/modules/callbacks"
	"pvebill/modules/executor"
	"pvebill/modules/ippool"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/qemu"
	"pvebill/modules/reinstall"
	usagedb "pvebill/modules/usage"
	"pvebill/server"
	"pvebill/server/config"
)

// app is one running pvebill: storage, executor, cron and HTTP, wired from a Config.
type app struct {
	cfg   config.Config
	log   *slog.Logger
	db    *models.DB
	reg   *prometheus.Registry
	exec  *executor.Executor
	sched *jobs.Scheduler
	srv   *server.Server
	plans *plans.Service
	// sampler is the swap sampling job; its node rounds are ended at shutdown.
	sampler *jobs.SwapSampler
	// cbs delivers completion callbacks to the clients that configured a callback URL.
	cbs *callbacks.Dispatcher
	// shards holds this replica's node leases for sampling; released at shutdown.
	shards *jobs.Shards
	// limits is the limit enforcement job, run once per tick across the replicas.
	limits jobs.Job
}

func newLogger(format, level string, w io.Writer) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// buildApp opens the database and wires every part. When autoMigrate is set (the embedded SQLite
// default) pending migrations are applied; otherwise a schema that is behind is refused.
func buildApp(ctx context.Context, cfg config.Config, log *slog.Logger, autoMigrate bool, extra ...executor.Action) (*app, error) {
	db, err := models.Open(cfg.Database.Driver, cfg.Database.DSN)
	if err != nil {
		return nil, err
	}
	if autoMigrate {
		if _, err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := db.CheckSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	host, _ := os.Hostname()
	exec := executor.New(db, executor.Config{
		Owner:        fmt.Sprintf("%s-%d-%s", host, os.Getpid(), models.NewID()[:8]),
		Workers:      cfg.Executor.Workers,
		Lease:        cfg.Executor.Lease,
		PollInterval: cfg.Executor.PollInterval,
	}, log, executor.NewMetrics(reg), extra...)
	sched := jobs.NewScheduler(log, jobs.NewMetrics(reg))
	// Replicas share one schedule: each job's tick runs on one of them, and the sampled nodes
	// are split between them by leases.
	once := func(spec string, job jobs.Job, deadline time.Duration) error {
		every, err := jobs.TickWidth(spec)
		if err != nil {
			return err
		}
		return sched.Add(spec, jobs.TickLease{Job: job, DB: db, Owner: exec.Owner(), Every: every, Hold: deadline, Log: log}, deadline)
	}
	if err := once("@every 1h", jobs.IdempotencyPurge{DB: db, Log: log}, 5*time.Minute); err != nil {
		db.Close()
		return nil, err
	}
	mods := modules.NewRegistry(lxc.New(), qemu.New())
	planSvc := plans.NewService(db, plans.Options{Clusters: server.PlanClusters(cfg), Built: mods.Built()})
	if cfg.PlansFile != "" {
		loaded, err := planSvc.LoadFile(ctx, cfg.PlansFile)
		if err != nil {
			db.Close()
			return nil, err
		}
		log.Info("plans loaded", "plans_file", cfg.PlansFile, "plans", len(loaded))
	}
	ipSvc := ippool.NewService(db).WithClusters(server.IPPoolClusters(cfg))
	if len(cfg.IPPools) > 0 {
		loaded, err := ipSvc.Import(ctx, ipPoolSpecs(cfg.IPPools), ippool.SourceFile)
		if err != nil {
			db.Close()
			return nil, err
		}
		log.Info("ip pools loaded", "ip_pools", len(loaded))
	}
	clusters, err := pveClusters(cfg, reg)
	if err != nil {
		db.Close()
		return nil, err
	}
	prov := provision.New(provision.Options{DB: db, Plans: planSvc, Modules: mods, Clusters: clusters,
		Addresses: provision.IPPools(ipSvc), Secrets: exec.Secrets(), Log: log, Metrics: provision.NewMetrics(reg)})
	for _, a := range prov.Actions() {
		exec.Register(a)
	}
	rclusters := make([]modules.Cluster, 0, len(clusters))
	for _, c := range clusters {
		rclusters = append(rclusters, modules.Cluster{Name: c.Name, Client: c.Client})
	}
	rs := reinstall.New(reinstall.Options{DB: db, Plans: planSvc, Modules: mods, Clusters: rclusters,
		Addresses: provision.IPPools(ipSvc), Secrets: exec.Secrets(), Log: log})
	for _, a := range rs.Actions() {
		exec.Register(a)
	}
	shards := &jobs.Shards{DB: db, Owner: exec.Owner(), Log: log}
	sampler, err := scheduleUsage(cfg, db, clusters, sched, reg, log, shards, once)
	if err != nil {
		db.Close()
		return nil, err
	}
	limits := jobs.Limits{Provision: prov, Log: log, Kick: exec.Kick}
	if err := once(cfg.Jobs.Limits, limits, 5*time.Minute); err != nil {
		db.Close()
		return nil, err
	}
	// Say at start-up whether each cluster answers and whether its datacenter firewall is on
	// (R9); neither stops the server.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	for name, detail := range prov.Readiness(rctx) {
		log.Info("cluster", "cluster", name, "detail", detail)
	}
	cancel()
	srv := server.New(server.Options{Config: cfg, DB: db, Executor: exec, Registry: reg, Logger: log, OpenAPI: openAPISpec,
		Plans: planSvc, IPPools: ipSvc, Provision: prov, Reinstall: rs})
	cbs := callbacks.New(callbacks.Options{DB: db, Targets: callbackTargets(cfg), Log: log.With("component", "callbacks"),
		Metrics: callbacks.NewMetrics(reg), Owner: exec.Owner()})
	return &app{cfg: cfg, log: log, db: db, reg: reg, exec: exec, sched: sched, srv: srv, plans: planSvc,
		sampler: sampler, cbs: cbs, shards: shards, limits: limits}, nil
}

// scheduleUsage schedules the swap sampler (jobs.swap_sampling, R31) and the retention of usage
// buckets, and registers the per-guest swap, sampler and needs-reconciliation metrics (R33).
func scheduleUsage(cfg config.Config, db *models.DB, clusters []modules.Cluster, sched *jobs.Scheduler,
	reg *prometheus.Registry, log *slog.Logger, shards *jobs.Shards,
	once func(string, jobs.Job, time.Duration) error) (*jobs.SwapSampler, error) {
	spec := cfg.Jobs.SwapSampling
	if spec == "" {
		spec = "@every 1m"
	}
	interval, ok := jobs.SpecInterval(spec)
	if !ok {
		interval = jobs.DefaultSamplingInterval
	}
	shards.TTL = interval
	s := jobs.NewSwapSampler(db, clusters, usagedb.NewFolder(db), usagedb.NewGuestMetrics(reg), jobs.NewSamplerMetrics(reg), log,
		jobs.SamplerConfig{Interval: interval, Concurrency: cfg.Jobs.SwapSamplingConcurrency, Shard: shards})
	// The job's round ends before the next tick, so the scheduler never skips the whole job;
	// a node whose round is still running is skipped by the sampler alone.
	if err := sched.Add(spec, s, interval*9/10); err != nil {
		return nil, err
	}
	if err := once("@every 1h", jobs.UsageRetention{DB: db, Log: log, Retention: cfg.Jobs.UsageRetention}, 10*time.Minute); err != nil {
		return nil, err
	}
	usagedb.NewReconciliationGauge(reg, db)
	return s, nil
}

// pveClusters builds one Proxmox client per configured cluster, their metrics on the app's
// registry.
func pveClusters(cfg config.Config, reg *prometheus.Registry) ([]modules.Cluster, error) {
	if len(cfg.Clusters) == 0 {
		return nil, nil
	}
	m := pve.NewMetrics(reg)
	out := make([]modules.Cluster, 0, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		client, err := pve.New(pve.Config{Cluster: c.Name, URL: c.URL, TokenID: c.TokenID, TokenSecret: c.TokenSecret,
			Fingerprint: c.Fingerprint, InsecureSkipVerify: c.InsecureSkipVerify}, m)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		out = append(out, modules.Cluster{Name: c.Name, Client: client, Nodes: append([]string(nil), c.Nodes...)})
	}
	return out, nil
}

// callbackTargets lists the clients that configured a callback URL.
func callbackTargets(cfg config.Config) []callbacks.Target {
	var out []callbacks.Target
	for _, c := range cfg.Clients {
		if c.CallbackURL != "" {
			out = append(out, callbacks.Target{ClientID: c.ID, URL: c.CallbackURL, Secret: c.CallbackSecret})
		}
	}
	return out
}

// ipPoolSpecs turns the config file's ip_pools into pool specs (the same objects as the API's).
func ipPoolSpecs(in []config.IPPool) []ippool.Spec {
	out := make([]ippool.Spec, 0, len(in))
	for _, p := range in {
		out = append(out, ippool.Spec{Name: p.Name, Cluster: p.Cluster, Bridge: p.Bridge, CIDR: p.CIDR,
			Gateway: p.Gateway, First: p.First, Last: p.Last, Nameservers: p.Nameservers})
	}
	return out
}

// loadExamplePlans saves the embedded example plans (the embedded default's catalog).
func (a *app) loadExamplePlans(ctx context.Context) error {
	loaded, err := a.plans.Import(ctx, plans.Examples(), plans.SourceFile)
	if err != nil {
		return fmt.Errorf("example plans: %w", err)
	}
	a.log.Info("example plans loaded", "plans", len(loaded))
	return nil
}

// serve runs until ctx ends, then shuts down in order: drain HTTP, stop cron, finish or
// release claimed operations, close the database.
func (a *app) serve(ctx context.Context, ln net.Listener) error {
	a.exec.Start(ctx)
	a.shards.Start(ctx)
	a.sched.Start()
	a.cbs.Start(ctx)
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(ln) }()
	a.log.Info("pvebill listening", "addr", ln.Addr().String())
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	drain := a.cfg.Executor.DrainTimeout
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := a.srv.Shutdown(sctx); err != nil {
		a.log.Warn("http shutdown", "err", err)
	}
	a.sched.Stop(sctx)
	a.sampler.Close()
	a.exec.Stop(sctx)
	a.cbs.Stop(sctx)
	// Last, so the other replicas take this one's nodes and job ticks at once.
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	a.shards.Stop(rctx)
	rcancel()
	a.log.Info("pvebill stopped")
	cerr := a.db.Close()
	if serveErr != nil {
		return serveErr
	}
	return cerr
}
