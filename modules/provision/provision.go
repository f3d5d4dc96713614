package provision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules"
	"pvebill/modules/executor"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// Actions, as stored in operations.action (API.md operation.action).
const (
	ActionCreate     = "create"
	ActionSuspend    = "suspend"
	ActionUnsuspend  = "unsuspend"
	ActionTerminate  = "terminate"
	ActionChangePlan = "change_plan"
)

// Stage lists, one ordered list per action (R27).
var (
	createStages     = []string{"place", "allocate", "create", "start", "verify"}
	suspendStages    = []string{"precheck", "suspend"}
	unsuspendStages  = []string{"precheck", "unsuspend"}
	terminateStages  = []string{"precheck", "destroy", "release"}
	changePlanStages = []string{"precheck", "apply"}
)

// DefaultVMIDAttempts bounds how many candidate vmids one create tries (R2).
const DefaultVMIDAttempts = 16

// Cluster is one configured Proxmox cluster.
type Cluster struct {
	Name   string
	Client *pve.Client
	// Nodes are the nodes guests may be placed on; empty means every online node.
	Nodes []string
}

// Addresses hands out IPv4 addresses per service (modules/ippool behind an adapter). Allocate
// is idempotent per service.
type Addresses interface {
	Allocate(ctx context.Context, pool, serviceID string) (modules.Address, error)
	Lookup(ctx context.Context, serviceID string) ([]string, error)
	Release(ctx context.Context, serviceID string) error
}

// Options configure a Service.
type Options struct {
	DB       *models.DB
	Plans    *plans.Service
	Modules  *modules.Registry
	Clusters []Cluster
	// Addresses allocates static addresses for plans with an ip_pool; nil refuses such plans.
	Addresses Addresses
	Secrets   *executor.Secrets
	Log       *slog.Logger
	Metrics   *Metrics
	// VMIDAttempts bounds the vmid candidates of one create (zero: DefaultVMIDAttempts).
	VMIDAttempts int
	// Now is the clock (tests).
	Now func() time.Time
	// SharedReadTTL is how long creates share the node list and the next free vmid they read
	// from a cluster (zero: DefaultSharedReadTTL; negative: not shared).
	SharedReadTTL time.Duration
}

// Service is the provisioning layer between the HTTP handlers and the guest modules: it
// validates requests, writes operations, and runs them as executor actions.
type Service struct {
	db       *models.DB
	plans    *plans.Service
	mods     *modules.Registry
	clusters map[string]Cluster
	names    []string
	addrs    Addresses
	secrets  *executor.Secrets
	log      *slog.Logger
	metrics  *Metrics
	attempts int
	now      func() time.Time
	fwMu     sync.Mutex
	fwState  map[string]string
	// placeMu makes a placement's read of the creates in flight and its record one step.
	placeMu sync.Mutex
	readTTL time.Duration
	readsMu sync.Mutex
	shared  map[string]*clusterReads
}

// New builds the service.
func New(o Options) *Service {
	if o.VMIDAttempts <= 0 {
		o.VMIDAttempts = DefaultVMIDAttempts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.SharedReadTTL == 0 {
		o.SharedReadTTL = DefaultSharedReadTTL
	}
	s := &Service{readTTL: o.SharedReadTTL, shared: map[string]*clusterReads{}, db: o.DB, plans: o.Plans, mods: o.Modules, clusters: map[string]Cluster{}, addrs: o.Addresses,
		secrets: o.Secrets, log: o.Log, metrics: o.Metrics, attempts: o.VMIDAttempts, now: o.Now, fwState: map[string]string{}}
	for _, c := range o.Clusters {
		s.clusters[c.Name] = c
		s.names = append(s.names, c.Name)
	}
	sort.Strings(s.names)
	return s
}

// Actions are the executor actions of the lifecycle, registered before the executor starts.
func (s *Service) Actions() []executor.Action {
	return []executor.Action{
		{Name: ActionCreate, Stages: createStages, Run: s.runCreate},
		{Name: ActionSuspend, Stages: suspendStages, Run: s.runSuspend},
		{Name: ActionUnsuspend, Stages: unsuspendStages, Run: s.runUnsuspend},
		{Name: ActionTerminate, Stages: terminateStages, Irreversible: "destroy", Run: s.runTerminate},
		{Name: ActionChangePlan, Stages: changePlanStages, Run: s.runChangePlan},
	}
}

func (s *Service) cluster(name string) (Cluster, error) {
	c, ok := s.clusters[name]
	if !ok {
		return Cluster{}, i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).
			Perm(i18n.Temporary).Wrap(fmt.Errorf("cluster %q is not configured", name))
	}
	return c, nil
}

func (s *Service) module(kind string) (modules.Module, error) {
	m, ok := s.mods.Get(plans.GuestType(kind))
	if !ok {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeNotYetAvailable).Perm(i18n.Temporary)
	}
	return m, nil
}

// problemOf sorts any error of a lifecycle step into a typed problem, in one place: Proxmox
// task failures are proxmox_task_failed, unreachable clusters proxmox_unavailable, locks and
// protection the matching blockers.
func problemOf(err error) error {
	var p *i18n.Problem
	if errors.As(err, &p) {
		return p
	}
	var apiErr *pve.APIError
	switch {
	case errors.Is(err, pve.ErrTaskFailed):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	case errors.Is(err, pve.ErrProtected):
		return blocked(i18n.Blocker{Code: BlockerProtection}).Wrap(err)
	case errors.Is(err, pve.ErrLocked):
		return blocked(i18n.Blocker{Code: BlockerLock, Params: map[string]string{"lock": lockName(err)}}).Wrap(err)
	case errors.Is(err, pve.ErrTransient), errors.Is(err, pve.ErrAuth), errors.Is(err, pve.ErrTLS),
		errors.Is(err, context.DeadlineExceeded):
		return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).Wrap(err)
	case errors.As(err, &apiErr):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	}
	return err
}

func lockName(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "is locked ("); i >= 0 {
		rest := msg[i+len("is locked ("):]
		if j := strings.IndexByte(rest, ')'); j >= 0 {
			return rest[:j]
		}
	}
	return "unknown"
}

// Blockers of the lifecycle, shared with the reinstall flow (R25): the catalog holds their
// phrases under blocker.<code>.
const (
	BlockerGuestMissing = "guest_missing"
	BlockerProtection   = "protection_enabled"
	BlockerLock         = "proxmox_lock"
	BlockerShrink       = "rootfs_would_shrink"
)

func blocked(b ...i18n.Blocker) *i18n.Problem {
	p := i18n.NewProblem(http.StatusConflict, i18n.CodeBlocked)
	p.Blockers = b
	return p
}

func notOurs(vmid int) *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeGuestNotOurs).Perm(i18n.Permanent).
		With("vmid", fmt.Sprint(vmid))
}

// reporter records task warnings and the failing task of an operation for its result.
type reporter struct {
	Warnings []taskNote `json:"warnings,omitempty"`
}

type taskNote struct {
	Stage      string   `json:"stage"`
	UPID       string   `json:"upid"`
	ExitStatus string   `json:"exit_status"`
	Warnings   int      `json:"warnings,omitempty"`
	LogTail    []string `json:"log_tail,omitempty"`
}

func (r *reporter) Task(stage string, res pve.TaskResult) {
	if res.Warnings > 0 {
		r.Warnings = append(r.Warnings, taskNote{Stage: stage, UPID: res.UPID, ExitStatus: res.ExitStatus,
			Warnings: res.Warnings, LogTail: res.LogTail})
	}
}

// result is what an operation records when it ends.
type result struct {
	VMID     *int       `json:"vmid,omitempty"`
	Node     string     `json:"node,omitempty"`
	NoOp     bool       `json:"noop,omitempty"`
	Adopted  bool       `json:"adopted,omitempty"`
	Warnings []taskNote `json:"warnings,omitempty"`
	Failed   *taskNote  `json:"failed_task,omitempty"`
}

// finishResult fills the failing task (exit status and log tail) from err.
func (r *result) fail(stage string, err error) {
	var te *pve.TaskError
	if errors.As(err, &te) {
		r.Failed = &taskNote{Stage: stage, UPID: te.Result.UPID, ExitStatus: te.Result.ExitStatus, LogTail: te.Result.LogTail}
	}
}
