package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"pvebill/models"
)

// Several replicas run the same schedule against one database. Two kinds of lease keep their
// cron work from being done twice:
//
//   - TickLease wraps a job so that each tick runs on exactly one replica: the first replica to
//     claim the tick in the leases table runs it, the others skip it, and no replica starts a
//     tick while another still runs an earlier one.
//   - Shards splits the sampled nodes between the live replicas: each holds node leases up to
//     its fair share, renews all of them in one statement a few times per TTL, and takes the
//     nodes of a replica that stopped renewing once their leases expire.

// TickWidth is the length of one tick of a cron spec: the interval of "@every D", or the gap
// between two consecutive activations of a standard spec.
func TickWidth(spec string) (time.Duration, error) {
	if d, ok := SpecInterval(spec); ok {
		return d, nil
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return 0, fmt.Errorf("cron spec %q: %w", spec, err)
	}
	first := sched.Next(time.Unix(0, 0).UTC())
	width := sched.Next(first).Sub(first)
	if width <= 0 {
		return 0, fmt.Errorf("cron spec %q: no interval", spec)
	}
	return width, nil
}

// TickLease runs Job on one replica per tick fleet-wide: a lease on the tick in the leases
// table, not a sync.Once (every tick runs, each on one replica). A tick is the wall-clock window
// of width Every the round starts in; Hold bounds how long the claim keeps other replicas from
// starting the next tick if this one never says it ended (its process died).
type TickLease struct {
	Job   Job
	DB    *models.DB
	Owner string
	Every time.Duration
	Hold  time.Duration
	Log   *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Name implements Job.
func (o TickLease) Name() string { return o.Job.Name() }

// Run implements Job: claim the tick, run the job, end the claim.
func (o TickLease) Run(ctx context.Context) error {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	at := now()
	tick := at.UnixNano() / int64(o.Every)
	epoch, ok, err := o.DB.ClaimTick(ctx, o.Job.Name(), o.Owner, tick, at, o.Hold)
	if err != nil {
		return fmt.Errorf("claim tick of %s: %w", o.Job.Name(), err)
	}
	if !ok {
		if o.Log != nil {
			o.Log.Debug("job tick runs on another replica", "job", o.Job.Name(), "tick", tick)
		}
		return nil
	}
	runErr := o.Job.Run(ctx)
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := o.DB.EndTick(ectx, o.Job.Name(), o.Owner, epoch); err != nil && o.Log != nil {
		o.Log.Warn("end job tick", "job", o.Job.Name(), "err", err)
	}
	return runErr
}

// NodeShard decides which nodes of a cluster this replica samples.
type NodeShard interface {
	Own(ctx context.Context, cluster string, nodes []string) (map[string]bool, error)
}

// Shards holds this replica's node leases (NodeShard). Own balances and renews them at every
// sampling round; Start renews every held lease and the replica's heartbeat in one statement
// every TTL/3 in between, so a live replica never loses its nodes to a slow round; Stop
// releases them all so the other replicas take them at their next round.
type Shards struct {
	DB    *models.DB
	Owner string
	// TTL is how long a lease lasts without renewal: a dead replica's nodes are taken by the
	// first round after it. Keep it at most one sampling interval so that they are taken
	// within two intervals.
	TTL time.Duration
	Log *slog.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool
}

// Own implements NodeShard.
func (s *Shards) Own(ctx context.Context, cluster string, nodes []string) (map[string]bool, error) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return map[string]bool{}, nil
	}
	names := make([]string, len(nodes))
	byName := make(map[string]string, len(nodes))
	for i, n := range nodes {
		names[i] = models.NodeLeaseName(cluster, n)
		byName[names[i]] = n
	}
	held, err := s.DB.ShardLeases(ctx, s.Owner, names, s.TTL)
	if err != nil {
		return nil, fmt.Errorf("node leases of %s: %w", cluster, err)
	}
	out := make(map[string]bool, len(held))
	for name := range held {
		out[byName[name]] = true
	}
	return out, nil
}

// Start begins the batched renewals.
func (s *Shards) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(max(s.TTL/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := s.DB.RenewLeases(ctx, s.Owner, s.TTL); err != nil && ctx.Err() == nil && s.Log != nil {
					s.Log.Warn("renew leases", "err", err)
				}
			}
		}
	}()
}

// Stop ends the renewals and releases every lease this replica holds.
func (s *Shards) Stop(ctx context.Context) {
	s.mu.Lock()
	s.stopped = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if err := s.DB.ReleaseLeases(ctx, s.Owner); err != nil && s.Log != nil {
		s.Log.Warn("release leases", "err", err)
	}
}
