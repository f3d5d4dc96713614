// Package stacktest is the test harness of the flows: New gives a test its database, simulated
// cluster, stack, log and plan fixtures (Plans), and WithServices completes a server's options
// for tests and benchmarks that build a server without running any lifecycle operation. It is
// for tests only: no production package imports it.
package stacktest

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/modules/executor"
	"pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
)

// WithServices completes o with the services it leaves nil, from a stack over o.DB with no
// guest kind and no cluster (every capability of its plans reads as not built) whose executor
// is never started. The stack's own metrics stay off o.Registry, so a scrape of o.Registry
// shows only what the caller registered.
func WithServices(o server.Options) server.Options {
	st := stack.New(stack.Options{DB: o.DB, Log: o.Logger, Metrics: prometheus.NewRegistry(),
		Executor: executor.Config{Owner: "stacktest", Workers: 1, Lease: 30 * time.Second, PollInterval: time.Second}})
	full := serve.Options(st, o.Config)
	if o.Executor == nil {
		o.Executor = full.Executor
	}
	if o.Plans == nil {
		o.Plans = full.Plans
	}
	if o.IPPools == nil {
		o.IPPools = full.IPPools
	}
	if o.Provision == nil {
		o.Provision = full.Provision
	}
	if o.Reinstall == nil {
		o.Reinstall = full.Reinstall
	}
	if o.Console == nil {
		o.Console = full.Console
	}
	if o.Password == nil {
		o.Password = full.Password
	}
	if o.RDNS == nil {
		o.RDNS = full.RDNS
	}
	if o.Moves == nil {
		o.Moves = full.Moves
	}
	if o.Power == nil {
		o.Power = full.Power
	}
	if o.Backups == nil {
		o.Backups = full.Backups
	}
	if o.Snapshots == nil {
		o.Snapshots = full.Snapshots
	}
	if o.Nodes == nil {
		o.Nodes = full.Nodes
	}
	if o.Readiness == nil {
		o.Readiness = full.Readiness
	}
	return o
}

// Executor is the executor configuration the tests share: four workers, a 5 s lease, a claim
// poll every 20 ms and 50 ms between resumes; a test changes what it is about.
func Executor(owner string) executor.Config {
	return executor.Config{Owner: owner, Workers: 4, Lease: 5 * time.Second, PollInterval: 20 * time.Millisecond,
		HealBackoff: 50 * time.Millisecond}
}
