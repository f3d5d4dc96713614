package stack

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/ippool"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/rdns"
	"pvebill/server/config"
)

// FromConfig wires a stack from the server configuration over an open database: a metrics
// registry with the Go and process collectors, one Proxmox client per cluster, the executor
// under a per-process owner name, the plans file and the configured address pools loaded.
func FromConfig(ctx context.Context, cfg config.Config, db *models.DB, log *slog.Logger, extra ...executor.Action) (*Stack, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	db.RegisterMetrics(reg)
	host, err := os.Hostname()
	if err != nil {
		host = "pvebill"
	}
	owner := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), models.NewID()[:8])
	hub, err := AgentHub(cfg, db, reg, log, owner)
	if err != nil {
		return nil, err
	}
	clusters, err := Clusters(cfg, reg, hub)
	if err != nil {
		return nil, err
	}
	st := New(Options{DB: db, Log: log, Metrics: reg, Kinds: Kinds(), Clusters: clusters, Actions: extra,
		PlanClusters: planClusters(cfg), PoolClusters: poolClusters(cfg), Agents: hub,
		Executor: executor.Config{Owner: owner, RunContext: pve.WaitForTunnel,
			Workers: cfg.Executor.Workers, Lease: cfg.Executor.Lease, PollInterval: cfg.Executor.PollInterval,
			LongWorkers: cfg.Executor.BackupWorkers},
		Provision: provision.Options{}, Console: cfg.Console, PowerDNS: powerDNS(cfg.DNS.PowerDNS)})
	if cfg.PlansFile != "" {
		loaded, err := st.Plans.LoadFile(ctx, cfg.PlansFile)
		if err != nil {
			return nil, err
		}
		log.Info("plans loaded", "plans_file", cfg.PlansFile, "plans", len(loaded))
	}
	if len(cfg.IPPools) > 0 {
		loaded, err := st.IPPools.Import(ctx, poolSpecs(cfg.IPPools), ippool.SourceFile)
		if err != nil {
			return nil, err
		}
		log.Info("ip pools loaded", "ip_pools", len(loaded))
	}
	return st, nil
}

// poolSpecs turns the config file's ip_pools into pool specs (the same objects as the API's).
func poolSpecs(in []config.IPPool) []ippool.Spec {
	out := make([]ippool.Spec, 0, len(in))
	for _, p := range in {
		out = append(out, ippool.Spec{Name: p.Name, Cluster: p.Cluster, Bridge: p.Bridge, CIDR: p.CIDR,
			Gateway: p.Gateway, First: p.First, Last: p.Last, AssignPrefix: p.AssignPrefix, Nameservers: p.Nameservers,
			ReverseZone: p.ReverseZone})
	}
	return out
}

// powerDNS is the PowerDNS client of dns.powerdns, or nil when reverse DNS is off (R55).
func powerDNS(c config.PowerDNS) *rdns.PowerDNS {
	if !c.Enabled() {
		return nil
	}
	id := c.ServerID
	if id == "" {
		id = config.DefaultPowerDNSServerID
	}
	return &rdns.PowerDNS{URL: c.URL, APIKey: c.APIKey, ServerID: id}
}

// planClusters tells the plans which clusters and nodes a plan may name: the configured ones.
func planClusters(cfg config.Config) plans.Clusters {
	if len(cfg.Clusters) == 0 {
		return nil
	}
	out := make(plans.Clusters, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		out[c.Name] = append([]string(nil), c.Nodes...)
	}
	return out
}

// poolClusters are the clusters an address pool may name: the configured ones.
func poolClusters(cfg config.Config) []string {
	out := make([]string, 0, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		out = append(out, c.Name)
	}
	return out
}
