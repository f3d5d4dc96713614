package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// DefaultVMIDAttempts bounds how many candidate vmids one create tries (R2).
const DefaultVMIDAttempts = 16

// Options configure a Placer. DB, Plans, Clusters, Log and Metrics are required (modules/stack
// wires them); the rest are tunables with defaults.
type Options struct {
	DB       *models.DB
	Plans    *plans.Service
	Clusters []kinds.Cluster
	Log      *slog.Logger
	Metrics  *Metrics
	// VMIDAttempts bounds the vmid candidates of one create (zero: DefaultVMIDAttempts).
	VMIDAttempts int
	// Now is the clock (zero: time.Now).
	Now func() time.Time
	// SharedReadTTL is how long creates share the node list and the next free vmid they read
	// from a cluster (zero: DefaultSharedReadTTL; negative: not shared).
	SharedReadTTL time.Duration
}

// Placer decides where guests go (R52): the node of a create, its vmid (R2), the node a guest
// moves to, and the node view of the admin API, from one shared read of each cluster's figures
// and the creates in flight in the database.
type Placer struct {
	db       *models.DB
	plans    *plans.Service
	clusters operation.Clusters
	log      *slog.Logger
	metrics  *Metrics
	attempts int
	now      func() time.Time
	// placeMu makes a placement's read of the creates in flight and its record one step.
	placeMu sync.Mutex
	readTTL time.Duration
	readsMu sync.Mutex
	shared  map[string]*clusterReads
}

// New builds the placer.
func New(o Options) *Placer {
	if o.VMIDAttempts <= 0 {
		o.VMIDAttempts = DefaultVMIDAttempts
	}
	if o.SharedReadTTL == 0 {
		o.SharedReadTTL = DefaultSharedReadTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Placer{db: o.DB, plans: o.Plans, clusters: operation.NewClusters(o.Clusters), log: o.Log, metrics: o.Metrics,
		attempts: o.VMIDAttempts, now: o.Now, readTTL: o.SharedReadTTL, shared: map[string]*clusterReads{}}
}

// Place picks the node for a new guest and records it on the service (R52). A candidate is
// online with figures, allowed by the cluster and the plan (and, when serves is not nil, one of
// its nodes: those a template of a kind that clones serves), not in maintenance, has the plan's storage active
// with room for the disk, and has the plan's memory within its headroom: its memory × the
// cluster's memory_overcommit, less the memory of every guest on it (running or stopped: both
// may run) and of the creates in flight there. Among the candidates it takes the least full
// (best): Proxmox's figures do not move until a guest exists, so the creates
// in flight count in each node's share, and a burst spreads over the nodes.
// The creates in flight are read and the choice recorded under one lock per process (another
// replica's choices are seen once recorded). The figures are one shared read of
// /cluster/resources per cluster (sharedRead). No candidate is no_capacity, before anything is
// sent to Proxmox.
func (s *Placer) Place(ctx context.Context, cl kinds.Cluster, p plans.Plan, k models.ServiceKey, serves map[string]bool) (string, error) {
	figs, err := s.clusterFigures(ctx, cl)
	if err != nil {
		return "", err
	}
	s.placeMu.Lock()
	defer s.placeMu.Unlock()
	nodes, err := s.weigh(ctx, cl, &p, k, figs)
	if err != nil {
		return "", err
	}
	s.metrics.observeNodes(cl.Name, nodes)
	if serves != nil {
		nodes = slices.DeleteFunc(nodes, func(n nodeCapacity) bool { return !serves[n.Name] })
	}
	chosen, err := s.choose(cl, nodes, "plan "+p.Code)
	if err != nil {
		return "", err
	}
	if err := s.db.UpdateService(ctx, k, map[string]any{"node": chosen}); err != nil {
		return "", err
	}
	return chosen, nil
}

// skipped lists why each node was passed over, for the log.
func skipped(nodes []nodeCapacity) string {
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		parts = append(parts, n.Name+": "+n.Skipped)
	}
	return strings.Join(parts, ", ")
}

// maxReserveRaces bounds how often a create may lose the database race for a candidate vmid to
// concurrent creates before it gives up (each loss costs one insert, no Proxmox call).
const maxReserveRaces = 4096

// AllocateVMID reserves a free vmid for the service (R2). The search starts at Proxmox's next
// free id, a shared read (sharedRead) since each candidate is reserved and confirmed on its own.
// Concurrent creates race for a candidate
// in our database first (unique (cluster, vmid)): the loser moves to the next id at the cost of
// one statement, so a thousand creates at once do not all collide at Proxmox. The winner then
// confirms the id with /cluster/nextid?vmid= and refuses it when a storage of the node still
// holds volumes named for it (a new guest would inherit them); a refused id is released and
// skipped, and each refusal counts against the bound.
func (s *Placer) AllocateVMID(ctx context.Context, cl kinds.Cluster, k models.ServiceKey, node string, skip map[int]bool) (int, error) {
	base, err := s.reads(cl.Name).nextID.get(ctx, s.now(), s.readTTL, func(ctx context.Context) (int, error) {
		id, err := cl.NextID(ctx, nil)
		if err != nil {
			return 0, fmt.Errorf("nextid on %s: %w", cl.Name, err)
		}
		return id, nil
	})
	if err != nil {
		return 0, err
	}
	refusals := 0
	for races := 0; races < maxReserveRaces && refusals < s.attempts; {
		cand, err := s.firstUnreserved(ctx, cl.Name, base, skip)
		if err != nil {
			return 0, err
		}
		skip[cand] = true
		err = s.db.ReserveVMID(ctx, k, cl.Name, cand)
		if errors.Is(err, models.ErrDuplicate) {
			races++
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reserve vmid %d: %w", cand, err)
		}
		free, err := s.vmidFreeAt(ctx, cl, node, cand)
		if err == nil && free {
			return cand, nil
		}
		if rerr := s.db.ReleaseVMID(ctx, k); rerr != nil {
			return 0, fmt.Errorf("release vmid %d: %w", cand, rerr)
		}
		if err != nil {
			return 0, err
		}
		refusals++
	}
	return 0, i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).
		Wrap(fmt.Errorf("no free vmid on %s after %d refused candidates", cl.Name, refusals))
}

// vmidFreeAt asks Proxmox whether vmid is unused cluster-wide and checks the node's storages for
// volumes named for it.
func (s *Placer) vmidFreeAt(ctx context.Context, cl kinds.Cluster, node string, vmid int) (bool, error) {
	if _, err := cl.NextID(ctx, &vmid); err != nil {
		if errors.Is(err, kinds.ErrAlreadyExists) {
			return false, nil
		}
		return false, fmt.Errorf("confirm vmid %d on %s: %w", vmid, cl.Name, err)
	}
	left, err := cl.LeftoverVolumes(ctx, node, vmid)
	if err != nil {
		return false, err
	}
	if len(left) > 0 {
		s.log.Warn("vmid has leftover volumes; not used", "cluster", cl.Name, "vmid", vmid, "volumes", strings.Join(left, ","))
		return false, nil
	}
	return true, nil
}

// firstUnreserved returns the first id from from on that no service holds and skip lacks.
func (s *Placer) firstUnreserved(ctx context.Context, cluster string, from int, skip map[int]bool) (int, error) {
	const page = 256
	cand := from
	for {
		ids, err := s.db.ReservedVMIDs(ctx, cluster, cand, page)
		if err != nil {
			return 0, fmt.Errorf("reserved vmids: %w", err)
		}
		taken := make(map[int]bool, len(ids))
		for _, id := range ids {
			taken[id] = true
		}
		for i := 0; i < page; i++ {
			if !taken[cand] && !skip[cand] {
				return cand, nil
			}
			cand++
		}
	}
}

// MigrationTarget picks the node a service's guest moves to from the node from (R52, R53): the
// node want when it is given and a candidate for the service's plan, else the best candidate
// other than from, judged as a create's placement (online, allowed, not in maintenance, the
// plan's storage with room, memory headroom), from figures read now. No candidate is
// no_capacity.
func (s *Placer) MigrationTarget(ctx context.Context, svc *models.Service, from, want string) (string, error) {
	cl, err := s.clusters.Get(svc.Cluster)
	if err != nil {
		return "", err
	}
	p, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return "", err
	}
	figs, err := s.freshFigures(ctx, cl)
	if err != nil {
		return "", operation.ProblemOf(err)
	}
	nodes, err := s.weigh(ctx, cl, &p, svc.Key(), figs)
	if err != nil {
		return "", err
	}
	nodes = slices.DeleteFunc(nodes, func(n nodeCapacity) bool { return n.Name == from || (want != "" && n.Name != want) })
	return s.choose(cl, nodes, fmt.Sprintf("service %s from %s", svc.ServiceID, from))
}

// HasNode reports whether the cluster's figures list node (an unknown cluster is not_found).
func (s *Placer) HasNode(ctx context.Context, cluster, node string) (bool, error) {
	_, figs, err := s.namedFigures(ctx, cluster)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(figs, func(f nodeFigures) bool { return f.Name == node }), nil
}

// VMIDAttempts is how many candidate vmids one create tries (R2): allocation stops after as many
// refused candidates, and a create after as many ids taken at Proxmox meanwhile.
func (s *Placer) VMIDAttempts() int { return s.attempts }
