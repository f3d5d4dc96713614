package placement

import (
	"context"
	"net/http"
	"sort"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// NodeView is one node of a cluster as placement sees it (R52), for the admin node view.
type NodeView struct {
	Node   string `json:"node"`
	Status string `json:"status"` // online, offline
	// Maintenance: an operator put the node into maintenance; placement sends it no new guest.
	Maintenance          bool          `json:"maintenance"`
	MemoryBytes          int64         `json:"memory_bytes"`
	MemoryCommittedBytes int64         `json:"memory_committed_bytes"`
	CreatesInFlight      int           `json:"creates_in_flight"`
	Guests               int           `json:"guests"`
	Storages             []StorageView `json:"storages"`
	// Skipped is why the node is no candidate for any plan (offline, no_figures, not_allowed,
	// maintenance);
	// absent when it is one, subject to each plan's nodes, storage and memory.
	Skipped string `json:"skipped,omitempty"`
}

// StorageView is one active storage of a node and its room.
type StorageView struct {
	Storage    string `json:"storage"`
	AvailBytes int64  `json:"avail_bytes"`
}

// Nodes lists the nodes of a configured cluster, by name, from the figures the creates share
// (at most a few seconds old); an unknown cluster is not_found.
func (s *Placer) Nodes(ctx context.Context, cluster string) ([]NodeView, error) {
	cl, figs, err := s.namedFigures(ctx, cluster)
	if err != nil {
		return nil, err
	}
	judged, err := s.weigh(ctx, cl, nil, models.ServiceKey{}, figs)
	if err != nil {
		return nil, err
	}
	s.metrics.observeNodes(cl.Name, judged)
	out := make([]NodeView, 0, len(judged))
	for _, n := range judged {
		v := NodeView{Node: n.Name, Status: "offline", Maintenance: n.Maintenance, MemoryBytes: n.Memory,
			MemoryCommittedBytes: n.Committed, CreatesInFlight: n.InFlight.Count,
			Guests: len(n.Guests), Storages: []StorageView{}, Skipped: n.Skipped}
		if n.Online {
			v.Status = "online"
		}
		for id, st := range n.Storages {
			if st.Active {
				v.Storages = append(v.Storages, StorageView{Storage: id, AvailBytes: st.Avail})
			}
		}
		sort.Slice(v.Storages, func(i, j int) bool { return v.Storages[i].Storage < v.Storages[j].Storage })
		out = append(out, v)
	}
	return out, nil
}

// namedFigures is the cluster of that name and its shared figures, the read's error as a
// problem; an unknown cluster is not_found.
func (s *Placer) namedFigures(ctx context.Context, cluster string) (kinds.Cluster, []nodeFigures, error) {
	cl, ok := s.clusters[cluster]
	if !ok {
		return kinds.Cluster{}, nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	figs, err := s.clusterFigures(ctx, cl)
	if err != nil {
		return kinds.Cluster{}, nil, operation.ProblemOf(err)
	}
	return cl, figs, nil
}
