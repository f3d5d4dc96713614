package provision

import (
	"context"
	"log/slog"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/backups"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/placement"
	"pvebill/modules/plans"
)

// Actions, as stored in operations.action (docs/api.md operation.action).
const (
	ActionCreate     = "create"
	ActionSuspend    = "suspend"
	ActionUnsuspend  = "unsuspend"
	ActionTerminate  = operation.ActionTerminate
	ActionChangePlan = "change_plan"
)

// Stage names of the lifecycle's actions.
const (
	StagePlace     executor.Stage = "place"
	StageAllocate  executor.Stage = "allocate"
	StageCreate    executor.Stage = "create"
	StageStart     executor.Stage = "start"
	StageVerify    executor.Stage = "verify"
	StagePrecheck                 = operation.StagePrecheck
	StageSuspend   executor.Stage = "suspend"
	StageUnsuspend executor.Stage = "unsuspend"
	StageDestroy   executor.Stage = "destroy"
	StageRelease   executor.Stage = "release"
	StageApply     executor.Stage = "apply"
	// StageDeleteBackups is terminate's last stage: the service's backups go when the plan
	// says so (R42).
	StageDeleteBackups = backups.StageDeleteBackups
)

// Addresses hands out IPv4 addresses per service (modules/ippool behind an adapter). Allocate
// is idempotent per service.
type Addresses interface {
	Allocate(ctx context.Context, pool string, k models.ServiceKey) (kinds.Address, error)
	Release(ctx context.Context, k models.ServiceKey) error
}

// RDNSRemover removes, as far as PowerDNS answers, the PTR records of a service whose addresses
// were released (modules/rdns). It never fails: what it cannot do now stays pending.
type RDNSRemover interface {
	SyncService(ctx context.Context, k models.ServiceKey)
}

// Options configure a Provisioner. Every dependency is required (modules/stack wires them);
// a nil Addresses is a real configuration: no address pools, so a plan naming one is refused.
type Options struct {
	DB       *models.DB
	Plans    *plans.Service
	Modules  *kinds.Registry
	Clusters []kinds.Cluster
	// Addresses allocates static addresses for plans with an ip_pool.
	Addresses Addresses
	Secrets   *executor.Secrets
	Log       *slog.Logger
	Metrics   *Metrics
	// RDNS, when set, is told after a terminate released the addresses, to remove the service's
	// PTR records at once (R55); what it cannot remove is retried by its job.
	RDNS RDNSRemover
	// Placement picks a create's node and vmid (R52, R2).
	Placement *placement.Placer
	// Guests finds a service's guest (R39).
	Guests *operation.Guests
	// Backups deletes a terminated service's backups when its plan says so (R42).
	Backups *backups.Service
	// Now is the clock (time.Now but in tests).
	Now func() time.Time
}

// Provisioner is the provisioning layer between the HTTP handlers and the guest modules: it
// validates requests, writes operations, and runs them as executor actions.
type Provisioner struct {
	db       *models.DB
	plans    *plans.Service
	mods     *kinds.Registry
	clusters operation.Clusters
	names    []string
	addrs    Addresses
	rdns     RDNSRemover
	secrets  *executor.Secrets
	log      *slog.Logger
	metrics  *Metrics
	place    *placement.Placer
	guests   *operation.Guests
	backups  *backups.Service
	now      func() time.Time
}

// New builds the provisioner.
func New(o Options) *Provisioner {
	s := &Provisioner{db: o.DB, plans: o.Plans, mods: o.Modules, clusters: operation.NewClusters(o.Clusters),
		addrs: o.Addresses, rdns: o.RDNS, secrets: o.Secrets, log: o.Log, metrics: o.Metrics, place: o.Placement, guests: o.Guests, backups: o.Backups, now: o.Now}
	s.names = s.clusters.Names()
	return s
}

// Actions are the executor actions of the lifecycle, registered before the executor starts;
// each action's stage list is its step list's (createSteps, suspendSteps ...).
func (s *Provisioner) Actions() []executor.Action {
	return []executor.Action{
		{Name: ActionCreate, Stages: executor.StagesOf(createSteps), Run: s.runCreate},
		{Name: ActionSuspend, Stages: executor.StagesOf(suspendSteps), Run: s.runSuspend},
		{Name: ActionUnsuspend, Stages: executor.StagesOf(unsuspendSteps), Run: s.runUnsuspend},
		{Name: ActionTerminate, Stages: executor.StagesOf(terminateSteps), Irreversible: StageDestroy, Run: s.runTerminate,
			Resolver: executor.ResolverFunc(s.resolveTerminate)},
		{Name: ActionChangePlan, Stages: executor.StagesOf(changePlanSteps), Run: s.runChangePlan},
	}
}

// blocked is the 409 blocked problem of the lifecycle's blockers.
func blocked(b ...i18n.Blocker) *i18n.Problem { return operation.Blocked(b...) }

// result is what an operation records when it ends.
type result struct {
	operation.Result
	// BackupsKept are the protected backups a terminate left (R42).
	BackupsKept []string `json:"backups_kept,omitempty"`
}
