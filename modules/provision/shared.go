package provision

import (
	"context"
	"sync"
	"time"
)

// DefaultSharedReadTTL is how long a cluster-wide read that only steers a create (the node list
// for placement, the next free vmid) is shared between creates: a few seconds, so a burst of
// creates costs one /cluster/resources per cluster (R52).
const DefaultSharedReadTTL = 3 * time.Second

// sharedRead shares one Proxmox read between the creates that need it at about the same time:
// the first caller reads, callers arriving meanwhile wait for that answer, and the answer is
// reused for ttl. It is used only for reads that steer a create and are checked again where it
// matters: the placement's node figures (the creates in flight come from the database) and the
// starting point of the vmid search (each candidate is reserved in the database and confirmed
// with Proxmox). A burst of a thousand creates then costs the cluster's entry node a read a
// second instead of a thousand.
type sharedRead[T any] struct {
	mu  sync.Mutex
	at  time.Time
	val T
}

func (r *sharedRead[T]) get(ctx context.Context, now time.Time, ttl time.Duration, fetch func(context.Context) (T, error)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && now.Sub(r.at) < ttl && now.Sub(r.at) >= 0 {
		return r.val, nil
	}
	v, err := fetch(ctx)
	if err != nil {
		return v, err
	}
	r.val, r.at = v, now
	return v, nil
}

// readAt is when the value shared was read, less a second for clocks that differ between
// replicas and the database (the zero time before the first read).
func (r *sharedRead[T]) readAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		return r.at
	}
	return r.at.Add(-time.Second)
}

// clusterReads are one cluster's shared reads.
type clusterReads struct {
	nodes  sharedRead[[]nodeFigures]
	nextID sharedRead[int]
}

func (s *Provisioner) reads(cluster string) *clusterReads {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	r, ok := s.shared[cluster]
	if !ok {
		r = &clusterReads{}
		s.shared[cluster] = r
	}
	return r
}
