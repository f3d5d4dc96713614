package jobs_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/stack/stacktest/poll"
)

type countJob struct {
	name  string
	runs  *sync.Map // tick -> *atomic.Int32
	tick  func() int64
	block chan struct{}
}

func (j countJob) Name() string { return j.name }
func (j countJob) Run(ctx context.Context) error {
	v, _ := j.runs.LoadOrStore(j.tick(), new(atomic.Int32))
	v.(*atomic.Int32).Add(1)
	if j.block != nil {
		select {
		case <-j.block:
		case <-ctx.Done():
		}
	}
	return nil
}

// replicas opens n handles on one fresh database (separate pools, as separate processes have).
func replicas(t *testing.T, dialect string, n int) []*models.DB {
	t.Helper()
	dsn := dbtest.DSN(t, dialect)
	out := make([]*models.DB, n)
	for i := range out {
		db, err := models.Open(dialect, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if i == 0 {
			if _, err := db.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		out[i] = db
	}
	return out
}

// claimRace runs claim perEach times at once on every replica and counts the claims that won:
// an insert-is-the-claim table accepts exactly one however many replicas race.
func claimRace(t *testing.T, dbs []*models.DB, perEach int, claim func(*models.DB) (bool, error)) int32 {
	t.Helper()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for _, db := range dbs {
		for range perEach {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := claim(db)
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	return wins.Load()
}

// Each cron tick runs on exactly one of three replicas that all fire it at once.
func TestOnceRunsEachTickOnceAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 3)
			var now atomic.Int64
			now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
			clock := func() time.Time { return time.Unix(0, now.Load()) }
			every := time.Minute
			runs := &sync.Map{}
			job := countJob{name: "limits", runs: runs, tick: func() int64 { return now.Load() / int64(every) }}
			const ticks = 15
			for range ticks {
				var wg sync.WaitGroup
				for i, db := range dbs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						o := jobs.TickLease{Job: job, DB: db, Owner: fmt.Sprintf("r%d", i), Every: every, Hold: time.Minute, Now: clock}
						for range 2 { // a replica firing twice in one tick still runs it once
							if err := o.Run(context.Background()); err != nil {
								t.Error(err)
							}
						}
					}()
				}
				wg.Wait()
				now.Add(int64(every))
			}
			total := 0
			runs.Range(func(k, v any) bool {
				if n := v.(*atomic.Int32).Load(); n != 1 {
					t.Errorf("tick %v ran %d times", k, n)
				}
				total++
				return true
			})
			if total != ticks {
				t.Fatalf("%d ticks ran, want %d", total, ticks)
			}
		})
	}
}

// A replica does not start the next tick while another still runs the previous one; a run
// whose replica died (no end recorded) holds the job only until its hold expires.
func TestOnceDoesNotOverlapAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			var now atomic.Int64
			now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
			clock := func() time.Time { return time.Unix(0, now.Load()) }
			every := time.Second
			runs := &sync.Map{}
			block := make(chan struct{})
			slow := countJob{name: "drift", runs: runs, tick: func() int64 { return now.Load() / int64(every) }, block: block}
			a := jobs.TickLease{Job: slow, DB: dbs[0], Owner: "a", Every: every, Hold: 1500 * time.Millisecond, Now: clock}
			fast := slow
			fast.block = nil
			b := jobs.TickLease{Job: fast, DB: dbs[1], Owner: "b", Every: every, Hold: 1500 * time.Millisecond, Now: clock}
			done := make(chan struct{})
			go func() { defer close(done); _ = a.Run(context.Background()) }()
			poll.Until(t, 5*time.Second, "replica a's run", func() bool { _, ok := runs.Load(now.Load() / int64(every)); return ok })
			now.Add(int64(every))
			if err := b.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, ran := runs.Load(now.Load() / int64(every)); ran {
				t.Fatal("replica b started a tick while replica a still ran the previous one")
			}
			// a's hold (one and a half ticks on the shared clock) expires although it still
			// runs (as if it had died): the job is free.
			now.Add(int64(every))
			if err := b.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, ran := runs.Load(now.Load() / int64(every)); !ran {
				t.Fatal("the job stayed held after the dead run's hold expired")
			}
			close(block)
			<-done
		})
	}
}

func nodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("pve%02d", i+1)
	}
	return out
}

// Three replicas share 20 nodes with leases: no node is ever sampled by two replicas in one
// round, the split settles at 7/7/6, and the nodes of a replica that dies (stops renewing,
// releases nothing) are all taken within two sampling intervals.
func TestShardsSplitNodesAndTakeOverADeadReplica(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 3)
			interval := 400 * time.Millisecond
			nodes := nodeNames(20)
			shards := make([]*jobs.Shards, 3)
			for i := range shards {
				shards[i] = &jobs.Shards{DB: dbs[i], Owner: fmt.Sprintf("replica-%d", i), TTL: interval}
			}
			// round runs one sampling round on the given replicas at once and checks that no
			// node went to two of them. A round that took longer than a lease (a loaded
			// machine) may see a lease expire and move within it, since nothing renews
			// before the survivors start: such a round is reported as nil, to be run again.
			round := func(live []int) [][]string {
				t.Helper()
				begin := time.Now()
				got := make([][]string, len(shards))
				var wg sync.WaitGroup
				for _, i := range live {
					wg.Add(1)
					go func() {
						defer wg.Done()
						owned, err := shards[i].Own(context.Background(), "default", nodes)
						if err != nil {
							t.Error(err)
							return
						}
						for n := range owned {
							got[i] = append(got[i], n)
						}
						sort.Strings(got[i])
					}()
				}
				wg.Wait()
				seen := map[string]int{}
				for i, g := range got {
					for _, n := range g {
						if prev, dup := seen[n]; dup {
							if took := time.Since(begin); took >= interval {
								t.Logf("round took %v, longer than a lease: node %s moved within it; running it again", took, n)
								return nil
							}
							var rows []models.Lease
							_ = dbtest.Query(dbs[0], &rows, "SELECT * FROM leases")
							for _, r := range rows {
								t.Logf("%s %v %d %v", r.Name, deref(r.Owner), r.Epoch, r.LeaseUntil)
							}
							t.Fatalf("node %s sampled by replicas %d and %d in one round", n, prev, i)
						}
						seen[n] = i
					}
				}
				return got
			}
			sizes := func(got [][]string, live []int) []int {
				var out []int
				for _, i := range live {
					out = append(out, len(got[i]))
				}
				sort.Ints(out)
				return out
			}
			all := []int{0, 1, 2}
			var got [][]string
			for r := 0; r < 10; r++ {
				if got = round(all); got != nil && fmt.Sprint(sizes(got, all)) == "[6 7 7]" {
					break
				}
			}
			if got == nil {
				t.Fatal("every settling round took longer than a lease")
			}
			if s := sizes(got, all); fmt.Sprint(s) != "[6 7 7]" {
				t.Fatalf("split after settling = %v, want [6 7 7]", s)
			}
			// The survivors-to-be renew in the background, as a serving replica does.
			for _, i := range []int{0, 1} {
				shards[i].Start(context.Background())
			}
			// Replica 2 dies right after its round: it neither renews nor releases. Its leases
			// (its nodes and its heartbeat) last one TTL from that round at most.
			died := time.Now()
			survivors := []int{0, 1}
			var rows []models.Lease
			dbtest.Scan(t, dbs[0], &rows, "SELECT * FROM leases WHERE owner = ?", shards[2].Owner)
			if len(rows) == 0 {
				t.Fatal("the replica about to die holds no lease")
			}
			for _, r := range rows {
				if r.LeaseUntil == nil || *r.LeaseUntil > died.Add(interval).UnixMicro() {
					t.Fatalf("lease %s of the dead replica lasts past one TTL: until %v, died %v", r.Name, r.LeaseUntil, died.UnixMicro())
				}
			}
			poll.Until(t, 10*interval, "the dead replica's leases to expire", func() bool {
				held, err := dbs[0].LeaseHolders(t.Context(), "")
				if err != nil {
					t.Fatal(err)
				}
				for _, owner := range held {
					if owner == shards[2].Owner {
						return false
					}
				}
				return true
			})
			// The first round after the leases expired takes every node of the dead replica.
			// A round that took longer than a lease (a loaded machine) is run again.
			got = nil
			for r := 0; r < 3 && got == nil; r++ {
				got = round(survivors)
			}
			if got == nil {
				t.Fatal("the takeover rounds took longer than a lease")
			}
			if len(got[0])+len(got[1]) != len(nodes) {
				t.Fatalf("dead replica's nodes not all taken by the first round after its leases expired: %v", sizes(got, survivors))
			}
			if s := sizes(got, survivors); fmt.Sprint(s) != "[10 10]" {
				t.Fatalf("split after takeover = %v, want [10 10]", s)
			}
			// A graceful stop releases at once: the survivor takes everything next round.
			shards[1].Stop(t.Context())
			got = round([]int{0})
			if len(got[0]) != len(nodes) {
				t.Fatalf("after a graceful stop the last replica holds %d nodes, want %d", len(got[0]), len(nodes))
			}
			held, err := dbs[0].LeaseHolders(t.Context(), models.LeaseNodePrefix)
			if err != nil {
				t.Fatal(err)
			}
			for name, owner := range held {
				if owner != "replica-0" {
					t.Fatalf("lease %s still held by %s", name, owner)
				}
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// shardSwitch owns the nodes in its set.
type shardSwitch struct {
	mu    sync.Mutex
	owned map[string]bool
}

func (s *shardSwitch) set(nodes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owned = map[string]bool{}
	for _, n := range nodes {
		s.owned[n] = true
	}
}

func (s *shardSwitch) Own(_ context.Context, _ string, nodes []string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, n := range nodes {
		if s.owned[n] {
			out[n] = true
		}
	}
	return out, nil
}

// A sharded sampler reads only its own nodes, and when another replica takes a node over it
// forgets that node's services, so that if the node comes back their usage buckets are
// resumed from the database (where the other replica wrote) rather than overwritten.
func TestShardedSamplerReadsOwnNodesAndForgetsLostOnes(t *testing.T) {
	shard := &shardSwitch{}
	shard.set("pve1", "pve2")
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2"}, jobs.SamplerConfig{Shard: shard})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	e.sim.ResetLog()
	e.run(10 * time.Second)
	e.sampler.Wait()
	for _, id := range []string{"svc-1001", "svc-2001"} {
		if _, ok := e.folder.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: id}); !ok {
			t.Fatalf("%s not sampled while its node was owned", id)
		}
	}
	shard.set("pve1")
	e.sim.Advance(time.Minute)
	e.sim.ResetLog()
	e.run(10 * time.Second)
	e.sampler.Wait()
	if got := e.calls(); got["GET /nodes/pve2/lxc"] != 0 || got["GET /nodes/pve1/lxc"] != 1 {
		t.Fatalf("calls after losing pve2: %v", got)
	}
	if _, ok := e.folder.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-2001"}); ok {
		t.Fatal("the folder kept the state of a service whose node another replica samples now")
	}
	if _, ok := e.folder.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-1001"}); !ok {
		t.Fatal("the folder forgot a service of a node it still owns")
	}
}
