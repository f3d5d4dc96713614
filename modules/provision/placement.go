package provision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// placeNode picks the node for a new container and records it on the service. Among the online
// nodes the plan allows (and the cluster's configured nodes) that have the plan's memory free,
// it takes the one with the fewest creates in flight, then the most free memory, then the first
// name; when no node has the memory free, the one with the most free memory. Counting creates in
// flight spreads a burst of creates over the nodes: Proxmox's memory figures do not move until
// the guests run, so by memory alone every create of a burst lands on one node, and a node's
// API workers then set the pace for all of them. The count is read and the choice recorded under
// one lock per process (another replica's choices are seen once recorded). The node figures are
// a shared read (sharedRead): a node that went offline less than SharedReadTTL ago may still be
// chosen, and that create fails as proxmox_unavailable, to be retried. A kind that clones
// (kinds.Cloner, a VM) is created on the node holding its template instead (templateNode).
func (s *Provisioner) placeNode(ctx context.Context, cl kinds.Cluster, p plans.Plan, k models.ServiceKey) (string, error) {
	nodes, err := s.allowedNodes(ctx, cl, p)
	if err != nil {
		return "", err
	}
	s.placeMu.Lock()
	defer s.placeMu.Unlock()
	inFlight, err := models.CreatesInFlight(ctx, s.db.Gorm, cl.Name, k)
	if err != nil {
		return "", fmt.Errorf("creates in flight on %s: %w", cl.Name, err)
	}
	need := int64(p.MemoryMiB) << 20
	better := func(a, b candidate) bool {
		if roomA, roomB := a.free >= need, b.free >= need; roomA != roomB {
			return roomA
		} else if roomA && inFlight[a.name] != inFlight[b.name] {
			return inFlight[a.name] < inFlight[b.name]
		}
		if a.free != b.free {
			return a.free > b.free
		}
		return a.name < b.name
	}
	best := nodes[0]
	for _, n := range nodes[1:] {
		if better(n, best) {
			best = n
		}
	}
	if err := models.UpdateService(ctx, s.db.Gorm, k, map[string]any{"node": best.name}); err != nil {
		return "", err
	}
	return best.name, nil
}

// candidate is a node placement may choose, with its free memory.
type candidate struct {
	name string
	free int64
}

// allowedNodes are the online nodes the plan and the cluster allow, from the shared read of the
// cluster's node figures; none is proxmox_unavailable.
func (s *Provisioner) allowedNodes(ctx context.Context, cl kinds.Cluster, p plans.Plan) ([]candidate, error) {
	figures, err := s.reads(cl.Name).nodes.get(ctx, s.now(), s.readTTL, func(ctx context.Context) ([]nodeFigures, error) {
		rows, err := cl.Client.Cluster().Resources(ctx, "node")
		if err != nil {
			return nil, fmt.Errorf("list nodes of %s: %w", cl.Name, err)
		}
		var out []nodeFigures
		for _, r := range rows {
			if r.Type == "node" {
				out = append(out, nodeFigures{Name: r.Node, Online: r.Status == "online", Free: int64(r.MaxMem) - int64(r.Mem)})
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	var nodes []candidate
	for _, r := range figures {
		if !r.Online {
			continue
		}
		if len(p.Nodes) > 0 && !slices.Contains(p.Nodes, r.Name) {
			continue
		}
		if len(cl.Nodes) > 0 && !slices.Contains(cl.Nodes, r.Name) {
			continue
		}
		nodes = append(nodes, candidate{r.Name, r.Free})
	}
	if len(nodes) == 0 {
		return nil, i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).
			Wrap(fmt.Errorf("no online node of cluster %s is allowed for plan %s", cl.Name, p.Code))
	}
	return nodes, nil
}

// templateNode is the node that holds the template of a kind that clones (Proxmox clones
// there).
func (s *Provisioner) templateNode(ctx context.Context, cl kinds.Cluster, mod kinds.Module, tmpl int) (string, error) {
	at, err := s.mods.Locate(ctx, cl, tmpl)
	if err != nil {
		return "", err
	}
	if !at.Found || at.Kind != mod.Kind() {
		return "", i18n.NewProblem(http.StatusConflict, i18n.CodeOSNotOffered).Perm(i18n.Temporary).
			With("os", fmt.Sprint(tmpl)).With("guest_type", string(mod.Kind())).
			Wrap(fmt.Errorf("template %d not found on cluster %s", tmpl, cl.Name))
	}
	return at.Node, nil
}

// maxReserveRaces bounds how often a create may lose the database race for a candidate vmid to
// concurrent creates before it gives up (each loss costs one insert, no Proxmox call).
const maxReserveRaces = 4096

// allocateVMID reserves a free vmid for the service (R2). The search starts at Proxmox's next
// free id, a shared read (sharedRead) since each candidate is reserved and confirmed on its own.
// Concurrent creates race for a candidate
// in our database first (unique (cluster, vmid)): the loser moves to the next id at the cost of
// one statement, so a thousand creates at once do not all collide at Proxmox. The winner then
// confirms the id with /cluster/nextid?vmid= and refuses it when a storage of the node still
// holds volumes named for it (a new guest would inherit them); a refused id is released and
// skipped, and each refusal counts against the bound.
func (s *Provisioner) allocateVMID(ctx context.Context, cl kinds.Cluster, k models.ServiceKey, node string, skip map[int]bool) (int, error) {
	base, err := s.reads(cl.Name).nextID.get(ctx, s.now(), s.readTTL, func(ctx context.Context) (int, error) {
		id, err := cl.Client.Cluster().NextID(ctx, nil)
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
		err = models.ReserveVMID(ctx, s.db.Gorm, k, cl.Name, cand)
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
		if rerr := models.ReleaseVMID(ctx, s.db.Gorm, k); rerr != nil {
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
func (s *Provisioner) vmidFreeAt(ctx context.Context, cl kinds.Cluster, node string, vmid int) (bool, error) {
	if _, err := cl.Client.Cluster().NextID(ctx, &vmid); err != nil {
		if errors.Is(err, pve.ErrAlreadyExists) {
			return false, nil
		}
		return false, fmt.Errorf("confirm vmid %d on %s: %w", vmid, cl.Name, err)
	}
	left, err := s.leftoverVolumes(ctx, cl, node, vmid)
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
func (s *Provisioner) firstUnreserved(ctx context.Context, cluster string, from int, skip map[int]bool) (int, error) {
	const page = 256
	cand := from
	for {
		ids, err := models.ReservedVMIDs(ctx, s.db.Gorm, cluster, cand, page)
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

// leftoverVolumes lists the volumes named for vmid on the node's enabled disk storages.
func (s *Provisioner) leftoverVolumes(ctx context.Context, cl kinds.Cluster, node string, vmid int) ([]string, error) {
	n := cl.Client.Node(node)
	stores, err := n.Storages(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list storages of %s: %w", node, err)
	}
	var out []string
	for _, st := range stores {
		if !strings.Contains(st.Content, "images") && !strings.Contains(st.Content, "rootdir") {
			continue
		}
		vols, err := n.Storage(st.Storage).Content(ctx, pve.ContentFilter{VMID: vmid})
		if err != nil {
			return nil, fmt.Errorf("list volumes of %s on %s: %w", st.Storage, node, err)
		}
		for _, v := range vols {
			if v.Content == "images" || v.Content == "rootdir" {
				out = append(out, v.VolID)
			}
		}
	}
	return out, nil
}
