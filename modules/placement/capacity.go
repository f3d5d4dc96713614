package placement

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// Why a node is no candidate for placement (R52), as the admin node view names it.
const (
	SkipOffline       = "offline"             // the node is not online
	SkipNoFigures     = "no_figures"          // Proxmox gave no memory figure (no Sys.Audit, or gone stale)
	SkipNotAllowed    = "not_allowed"         // the cluster's or the plan's nodes leave it out
	SkipMaintenance   = "maintenance"         // an operator put the node into maintenance
	SkipStorage       = "storage_unavailable" // the plan's storage is not active there
	SkipStorageFull   = "storage_full"        // the plan's storage has no room for the disk
	SkipMemoryFull    = "memory_full"         // the memory headroom is below the plan's memory
	skipNoneCandidate = ""
)

// nodeFigures is what placement reads of a node from one /cluster/resources: its memory, the
// memory committed to its guests (running or stopped, templates left out), its guests and its
// storages' room.
type nodeFigures struct {
	Name      string
	Online    bool
	Memory    int64
	Committed int64
	Guests    map[int]bool
	Storages  map[string]storageRoom
}

// storageRoom is one storage as one node reports it; a shared storage is listed once per node
// and counts once on each.
type storageRoom struct {
	Active bool
	Avail  int64
}

// clusterFigures reads the node figures of a cluster: one GET /cluster/resources for every
// node, guest and storage, shared between the creates of a few seconds (sharedRead).
func (s *Placer) clusterFigures(ctx context.Context, cl kinds.Cluster) ([]nodeFigures, error) {
	return s.reads(cl.Name).nodes.get(ctx, s.now(), s.readTTL, func(ctx context.Context) ([]nodeFigures, error) {
		return s.freshFigures(ctx, cl)
	})
}

// freshFigures reads the node figures now, past the shared read: a migration is chosen one at a
// time per node, minutes apart, and must see where the previous ones went.
func (s *Placer) freshFigures(ctx context.Context, cl kinds.Cluster) ([]nodeFigures, error) {
	rows, err := cl.Resources(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list resources of %s: %w", cl.Name, err)
	}
	return figuresOf(rows), nil
}

// figuresOf folds the rows of /cluster/resources into one entry per node, by name. A node
// without maxmem has no figures (Proxmox leaves them out without Sys.Audit and drops an
// offline node's after five minutes).
func figuresOf(rows []kinds.ClusterResource) []nodeFigures {
	byName := map[string]*nodeFigures{}
	node := func(name string) *nodeFigures {
		if byName[name] == nil {
			byName[name] = &nodeFigures{Name: name, Guests: map[int]bool{}, Storages: map[string]storageRoom{}}
		}
		return byName[name]
	}
	for _, r := range rows {
		switch {
		case r.Type == "node":
			n := node(r.Node)
			n.Online, n.Memory = r.Status == "online", int64(r.MaxMem)
		case r.Type == "storage":
			node(r.Node).Storages[r.Storage] = storageRoom{Active: r.Status == "available",
				Avail: int64(r.MaxDisk) - int64(r.Disk)}
		case r.VMID.Int() > 0 && !bool(r.Template):
			n := node(r.Node)
			n.Committed += int64(r.MaxMem)
			n.Guests[r.VMID.Int()] = true
		}
	}
	out := make([]nodeFigures, 0, len(byName))
	for _, n := range byName {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// inFlight is what the creates not yet ended hold on a node: how many, and the memory of those
// whose guest the figures do not list (a listed guest counts with its own maxmem), including
// creates that ended after the figures were read.
type inFlight struct {
	Count  int
	Memory int64
}

// createsInFlight sums the creates in flight per node of the cluster, leaving out except.
func (s *Placer) createsInFlight(ctx context.Context, cluster string, except models.ServiceKey, figs []nodeFigures) (map[string]inFlight, error) {
	rows, err := s.db.CreatesInFlight(ctx, cluster, except, s.reads(cluster).nodes.readAt())
	if err != nil {
		return nil, fmt.Errorf("creates in flight on %s: %w", cluster, err)
	}
	listed := map[string]map[int]bool{}
	for _, f := range figs {
		listed[f.Name] = f.Guests
	}
	mem := map[string]int64{}
	out := map[string]inFlight{}
	for _, r := range rows {
		f := out[r.Node]
		if r.State == models.ServiceProvisioning {
			f.Count++
		}
		if r.VMID == nil || !listed[r.Node][*r.VMID] {
			m, ok := mem[r.Plan]
			if !ok {
				if p, err := s.plans.Get(ctx, r.Plan); err == nil {
					m = int64(p.MemoryMiB) << 20
				}
				mem[r.Plan] = m
			}
			f.Memory += m
		}
		out[r.Node] = f
	}
	return out, nil
}

// nodeCapacity is one node as placement judges it for a plan (R52).
type nodeCapacity struct {
	nodeFigures
	InFlight    inFlight
	Headroom    int64
	Maintenance bool
	Skipped     string
}

// weigh judges the nodes of the figures for p (nil: for no plan in particular) with the creates
// in flight, except's left out, and the nodes in maintenance, both read from the database so
// that every replica sees an operator's maintenance at once.
func (s *Placer) weigh(ctx context.Context, cl kinds.Cluster, p *plans.Plan, except models.ServiceKey,
	figs []nodeFigures) ([]nodeCapacity, error) {
	fl, err := s.createsInFlight(ctx, cl.Name, except, figs)
	if err != nil {
		return nil, err
	}
	maint, err := s.db.NodesInMaintenance(ctx, cl.Name)
	if err != nil {
		return nil, err
	}
	return judge(cl, p, figs, fl, maint), nil
}

// judge weighs every node of the figures: its headroom (memory × overcommit − committed − the
// creates in flight) and why it is no candidate for the plan, if it is not. A nil plan judges
// only what does not depend on one (online, figures, the cluster's nodes, maintenance).
func judge(cl kinds.Cluster, p *plans.Plan, figs []nodeFigures, fl map[string]inFlight,
	maint map[string]models.NodeMaintenance) []nodeCapacity {
	oc := cl.MemoryOvercommit
	if oc < 1 {
		oc = 1
	}
	out := make([]nodeCapacity, 0, len(figs))
	for _, f := range figs {
		_, inMaint := maint[f.Name]
		c := nodeCapacity{nodeFigures: f, InFlight: fl[f.Name], Maintenance: inMaint}
		c.Headroom = int64(float64(f.Memory)*oc) - f.Committed - c.InFlight.Memory
		c.Skipped = skipReason(cl, p, c)
		out = append(out, c)
	}
	return out
}

// skipReason is why the node is no candidate, or "" when it is one.
func skipReason(cl kinds.Cluster, p *plans.Plan, c nodeCapacity) string {
	switch {
	case !c.Online:
		return SkipOffline
	case c.Memory <= 0:
		return SkipNoFigures
	case len(cl.Nodes) > 0 && !slices.Contains(cl.Nodes, c.Name):
		return SkipNotAllowed
	case c.Maintenance:
		return SkipMaintenance
	case p == nil:
		return skipNoneCandidate
	case len(p.Nodes) > 0 && !slices.Contains(p.Nodes, c.Name):
		return SkipNotAllowed
	case !c.Storages[p.Storage].Active:
		return SkipStorage
	case c.Storages[p.Storage].Avail < int64(p.DiskGiB)<<30:
		return SkipStorageFull
	case c.Headroom < int64(p.MemoryMiB)<<20:
		return SkipMemoryFull
	}
	return skipNoneCandidate
}

// choose is the best candidate's name, or no_capacity (counted) naming why each node was
// skipped; what says what was to be placed, for the log.
func (s *Placer) choose(cl kinds.Cluster, nodes []nodeCapacity, what string) (string, error) {
	chosen, ok := best(nodes)
	if !ok {
		s.metrics.noCapacity(cl.Name)
		return "", i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeNoCapacity).Perm(i18n.Temporary).
			Wrap(fmt.Errorf("no node of cluster %s can take %s: %s", cl.Name, what, skipped(nodes)))
	}
	return chosen.Name, nil
}

// best is the least full candidate: the lowest share of its placeable memory (memory ×
// overcommit) taken by its guests and the creates in flight there; then the fewest creates in
// flight, then the first name. Nodes fill in proportion to their size, whatever the size of
// each guest (a big guest is not steered to the big nodes), and a burst spreads because each
// create in flight already counts in its node's share (Proxmox's figures do not move until the
// guest exists). false when there is no candidate.
func best(nodes []nodeCapacity) (nodeCapacity, bool) {
	var out nodeCapacity
	outFill, found := 0.0, false
	for _, n := range nodes {
		if n.Skipped != skipNoneCandidate {
			continue
		}
		f := n.fillWith(0)
		if !found || f < outFill || (f == outFill && (n.InFlight.Count < out.InFlight.Count ||
			(n.InFlight.Count == out.InFlight.Count && n.Name < out.Name))) {
			out, outFill, found = n, f, true
		}
	}
	return out, found
}

// limit is the memory placement may commit on the node: its memory × the overcommit.
func (n nodeCapacity) limit() int64 { return n.Headroom + n.Committed + n.InFlight.Memory }

// fillWith is the share of the node's limit its guests, its creates in flight and want take.
func (n nodeCapacity) fillWith(want int64) float64 {
	l := n.limit()
	if l <= 0 {
		return 1
	}
	return float64(l-n.Headroom+want) / float64(l)
}

// noCapacity counts a no_capacity refusal.
func (m *Metrics) noCapacity(cluster string) {
	if m != nil {
		m.noCapacityTotal.WithLabelValues(cluster).Inc()
	}
}

// observeNodes sets the maintenance, fill and headroom gauges of the nodes judged; a node with
// no figures has no fill or headroom. The node labels come from Proxmox's list of the configured cluster's nodes.
func (m *Metrics) observeNodes(cluster string, nodes []nodeCapacity) {
	if m == nil {
		return
	}
	for _, n := range nodes {
		maint := 0.0
		if n.Maintenance {
			maint = 1
		}
		m.nodeMaintenance.WithLabelValues(cluster, n.Name).Set(maint)
		if n.Memory <= 0 {
			m.nodeFill.DeleteLabelValues(cluster, n.Name)
			m.nodeHeadroom.DeleteLabelValues(cluster, n.Name)
			continue
		}
		m.nodeFill.WithLabelValues(cluster, n.Name).Set(n.fillWith(0))
		m.nodeHeadroom.WithLabelValues(cluster, n.Name).Set(float64(n.Headroom))
	}
}
