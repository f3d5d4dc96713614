package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/modules/agent"
	"pvebill/modules/callbacks"
	"pvebill/modules/executor"
	"pvebill/modules/plans"
	"pvebill/modules/stack"
	"pvebill/modules/stack/serve"
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
	// readiness starts the background readiness check (R50); its stop ends it at shutdown.
	readiness func(ctx context.Context, every time.Duration) (stop func())
	// agents holds the agents' tunnels (R57); closed after the executor stopped, since the
	// operations it finishes may need them.
	agents *agent.Hub
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

// buildApp opens the database and wires every part (modules/stack). With stack.MigrateSchema
// (the embedded SQLite default) pending migrations are applied; with stack.RequireSchema a
// schema that is behind is refused.
func buildApp(ctx context.Context, cfg config.Config, log *slog.Logger, schema stack.Schema, extra ...executor.Action) (*app, error) {
	db, err := stack.Open(ctx, cfg, schema)
	if err != nil {
		return nil, err
	}
	a, err := wireApp(ctx, cfg, db, log, extra)
	if err != nil {
		if cerr := db.Close(); cerr != nil {
			log.Warn("close database", "err", cerr)
		}
		return nil, err
	}
	return a, nil
}

func wireApp(ctx context.Context, cfg config.Config, db *models.DB, log *slog.Logger, extra []executor.Action) (*app, error) {
	st, err := stack.FromConfig(ctx, cfg, db, log, extra...)
	if err != nil {
		return nil, err
	}
	js, err := st.Jobs(cfg)
	if err != nil {
		return nil, err
	}
	// Say at start-up whether each cluster answers and whether its datacenter firewall is on
	// (R9); neither stops the server. This first check is also what /readyz answers until the
	// background check runs (R50).
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	st.Readiness.Check(rctx)
	cancel()
	for name, detail := range st.Readiness.Readiness(ctx) {
		log.Info("cluster", readinessAttrs(name, detail)...)
	}
	so := serve.Options(st, cfg)
	so.OpenAPI = openAPISpec
	cbs := callbacks.New(callbacks.Options{DB: db, Targets: callbackTargets(cfg), Log: log.With("component", "callbacks"),
		Metrics: callbacks.NewMetrics(st.Metrics), Owner: st.Exec.Owner()})
	return &app{cfg: cfg, log: log, db: db, reg: st.Metrics, exec: st.Exec, sched: js.Scheduler, srv: server.New(so),
		plans: st.Plans, sampler: js.Sampler, cbs: cbs, shards: js.Shards, limits: js.Limits, readiness: st.StartReadiness,
		agents: st.Agents}, nil
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
	stopReadiness := a.readiness(ctx, a.cfg.Jobs.ReadinessInterval)
	peering := make(chan struct{})
	go func() {
		defer close(peering)
		a.agents.Run(ctx) // withdraws this replica's routes when ctx ends
	}()
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
	stopReadiness()
	a.sampler.Close()
	a.exec.Stop(sctx)
	a.cbs.Stop(sctx)
	a.agents.Shutdown(sctx)
	<-peering
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
