package placement

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
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
//
// One read is in flight at a time (singleflight): the callers arriving meanwhile share its
// answer, and each stops waiting when its own context ends. A read that hangs (a cut agent
// tunnel is noticed after 15 s, a cluster without its agent waits for it) therefore holds no
// caller beyond its own deadline. A caller that shared a read someone else started and that
// failed reads once more itself (shared again with the others doing the same): the read it
// shared may have been an API read that does not wait for the cluster's agent, while an
// operation's read does.
type sharedRead[T any] struct {
	mu    sync.Mutex
	at    time.Time
	val   T
	group singleflight.Group
	// waiting, when set, is told each time a caller waits for a read, with the round (0: the
	// first, 1: once more after a shared read failed). Tests set it to know which callers have
	// joined a read; nil otherwise.
	waiting func(round int)
}

// sharedReadBound bounds the one read in flight, whichever caller started it.
const sharedReadBound = 3 * time.Minute

func (r *sharedRead[T]) get(ctx context.Context, now time.Time, ttl time.Duration, fetch func(context.Context) (T, error)) (T, error) {
	r.mu.Lock()
	if !r.at.IsZero() && now.Sub(r.at) < ttl && now.Sub(r.at) >= 0 {
		v := r.val
		r.mu.Unlock()
		return v, nil
	}
	r.mu.Unlock()
	var zero T
	for round := 0; ; round++ {
		led := false
		ch := r.group.DoChan("", func() (any, error) {
			led = true
			// The read outlives the caller that started it (the others wait for it too), within
			// sharedReadBound; it keeps that caller's values (whether it waits for an agent).
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadBound)
			defer cancel()
			v, err := fetch(fctx)
			if err == nil {
				r.mu.Lock()
				r.val, r.at = v, now
				r.mu.Unlock()
			}
			return v, err
		})
		if r.waiting != nil {
			r.waiting(round)
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case res := <-ch:
			if res.Err == nil {
				return res.Val.(T), nil
			}
			if led || round > 0 {
				return zero, res.Err
			}
		}
	}
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

func (s *Placer) reads(cluster string) *clusterReads {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	r, ok := s.shared[cluster]
	if !ok {
		r = &clusterReads{}
		s.shared[cluster] = r
	}
	return r
}
