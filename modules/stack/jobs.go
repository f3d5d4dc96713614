package stack

import (
	"time"

	"pvebill/jobs"
	usagedb "pvebill/modules/usage"
	"pvebill/server/config"
)

// Jobs are the scheduled jobs of one replica.
type Jobs struct {
	Scheduler *jobs.Scheduler
	// Sampler is the swap sampling job; its node rounds are ended at shutdown.
	Sampler *jobs.SwapSampler
	// Shards holds this replica's node leases for sampling; released at shutdown.
	Shards *jobs.Shards
	// Limits is the limit enforcement job, run once per tick across the replicas.
	Limits jobs.Job
}

// Jobs schedules the cron jobs over the stack: the idempotency and seen-signature purges (R47), the swap sampler and
// the usage retention (R31–R33), limit enforcement (R16), scheduled backups (R42), the reverse DNS retries (R55). Replicas share one schedule: each
// job's tick runs on one of them, and the sampled nodes are split between them by leases.
func (st *Stack) Jobs(cfg config.Config) (*Jobs, error) {
	j := &Jobs{Scheduler: jobs.NewScheduler(st.Log, jobs.NewMetrics(st.Metrics)),
		Shards: &jobs.Shards{DB: st.DB, Owner: st.Exec.Owner(), Log: st.Log}}
	if err := st.once(j, "@every 1h", jobs.IdempotencyPurge{DB: st.DB, Log: st.Log}, 5*time.Minute); err != nil {
		return nil, err
	}
	if err := st.once(j, "@every 5m", jobs.SignaturePurge{DB: st.DB, Log: st.Log}, time.Minute); err != nil {
		return nil, err
	}
	if err := st.once(j, "@every 5m", jobs.ConsolePurge{DB: st.DB, Log: st.Log}, time.Minute); err != nil {
		return nil, err
	}
	if err := st.scheduleUsage(cfg, j); err != nil {
		return nil, err
	}
	// Scheduled backups (R42): every minute one replica looks for the plans' due windows.
	backups := jobs.BackupSchedule{Plans: st.Plans, Backups: st.Backups, DB: st.DB, Owner: st.Exec.Owner(), Log: st.Log,
		Kick: st.Exec.Kick}
	if err := st.once(j, "@every 1m", backups, 50*time.Second); err != nil {
		return nil, err
	}
	// Reverse DNS (R55): every minute one replica retries the PTR record changes that are due.
	if st.RDNS.Enabled() {
		if err := st.once(j, "@every 1m", jobs.RDNSSync{Syncer: st.RDNS}, 50*time.Second); err != nil {
			return nil, err
		}
	}
	j.Limits = jobs.Limits{Provision: st.Provisioner, Log: st.Log, Kick: st.Exec.Kick}
	if err := st.once(j, cfg.Jobs.Limits, j.Limits, 5*time.Minute); err != nil {
		return nil, err
	}
	return j, nil
}

// once schedules a job whose every tick runs on one replica.
func (st *Stack) once(j *Jobs, spec string, job jobs.Job, deadline time.Duration) error {
	every, err := jobs.TickWidth(spec)
	if err != nil {
		return err
	}
	return j.Scheduler.Add(spec, jobs.TickLease{Job: job, DB: st.DB, Owner: st.Exec.Owner(), Every: every, Hold: deadline, Log: st.Log}, deadline)
}

// scheduleUsage schedules the swap sampler (jobs.swap_sampling, R31), the usage roll-up and the
// retention of each usage tier (R45), and registers the per-guest swap, sampler and needs-reconciliation metrics (R33).
func (st *Stack) scheduleUsage(cfg config.Config, j *Jobs) error {
	spec := cfg.Jobs.SwapSampling
	if spec == "" {
		spec = "@every 1m"
	}
	interval, ok := jobs.SpecInterval(spec)
	if !ok {
		interval = jobs.DefaultSamplingInterval
	}
	j.Shards.TTL = interval
	j.Sampler = jobs.NewSwapSampler(st.DB, st.Clusters, st.Kinds.SwapSamplers(), usagedb.NewFolder(st.DB), usagedb.NewGuestMetrics(st.Metrics),
		jobs.NewSamplerMetrics(st.Metrics), st.Log,
		jobs.SamplerConfig{Interval: interval, Concurrency: cfg.Jobs.SwapSamplingConcurrency, Shard: j.Shards})
	// The job's round ends before the next tick, so the scheduler never skips the whole job;
	// a node whose round is still running is skipped by the sampler alone.
	if err := j.Scheduler.Add(spec, j.Sampler, interval*9/10); err != nil {
		return err
	}
	for _, w := range cfg.Deprecations() {
		st.Log.Warn("config", "deprecated", w)
	}
	ret := cfg.UsageRetentions()
	retention := jobs.UsageRetention{DB: st.DB, Log: st.Log, Retention5m: ret.Retention5m, Retention1h: ret.Retention1h,
		Retention1d: ret.Retention1d}
	if err := st.once(j, "@every 1h", retention, 10*time.Minute); err != nil {
		return err
	}
	rollup := jobs.UsageRollup{Roller: &usagedb.Roller{DB: st.DB}, Log: st.Log, Metrics: jobs.NewRollupMetrics(st.Metrics, st.DB, nil)}
	if err := st.once(j, "@every 5m", rollup, 4*time.Minute); err != nil {
		return err
	}
	usagedb.NewReconciliationGauge(st.Metrics, st.DB)
	return nil
}
