package usage

import (
	"context"
	"sort"
	"sync"
	"time"

	"pvebill/models"
)

// BucketWidth is the width of a usage bucket (R32).
const BucketWidth = 5 * time.Minute

// bucketSeconds is BucketWidth in seconds.
const bucketSeconds = int64(BucketWidth / time.Second)

// resumeWindow is how far back the folder looks for a service's stored state after a restart:
// the counters of a bucket older than this are not continued.
const resumeWindow = time.Hour

// BucketStart is the start of the bucket t falls in (a bucket belongs to the period its start
// falls in).
func BucketStart(t time.Time) time.Time {
	return time.Unix(t.Unix()-mod(t.Unix(), bucketSeconds), 0).UTC()
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// Sample is one reading of one running guest, as the node's container index or the guest's
// status/current reported it. Swap and SwapLimit are nil when the answer lacked them.
type Sample struct {
	ClientID  string // with ServiceID, the service's key (R46)
	ServiceID string
	Cluster   string
	Node      string
	VMID      int
	GuestType string
	At        time.Time

	Swap      *int64
	SwapLimit *int64
	Mem       int64
	CPU       float64 // fraction of the guest's CPUs
	Disk      int64
	NetIn     int64 // bytes since the guest started
	NetOut    int64
	Uptime    int64 // seconds
}

// Key is the key of the sample's service.
func (s Sample) Key() models.ServiceKey {
	return models.ServiceKey{ClientID: s.ClientID, ServiceID: s.ServiceID}
}

// Window is the swap seen over the last five minutes of samples.
type Window struct {
	Avg, Max int64
	Samples  int
}

type windowPoint struct {
	at   time.Time
	swap int64
}

// serviceState is what the folder keeps per service: the open bucket and the last counters.
type serviceState struct {
	bucket models.UsageBucket
	open   bool // bucket holds at least one sample
	dirty  bool
	window []windowPoint
}

// Folder folds samples into 5-minute buckets per service (R32) and writes them with batched,
// idempotent upserts. Network counters become deltas that survive counter resets: a counter
// below the previous reading, or an uptime below the previous one, means the guest restarted,
// and the delta is the new counter itself. The first reading of a guest has no delta (unknown,
// never zero). After a restart the folder resumes from the stored buckets (its open bucket and
// the last counters) so that neither sums nor deltas restart from nothing.
//
// A Folder is safe for concurrent use.
type Folder struct {
	db *models.DB

	mu      sync.Mutex
	state   map[models.ServiceKey]*serviceState
	closed  []models.UsageBucket       // buckets left behind by a newer sample, not yet written
	resumed map[models.ServiceKey]bool // services whose stored state was looked up
}

// NewFolder returns a folder writing to db.
func NewFolder(db *models.DB) *Folder {
	return &Folder{db: db, state: map[models.ServiceKey]*serviceState{}, resumed: map[models.ServiceKey]bool{}}
}

// Resume loads the stored state of services the folder has not seen in this process (one
// query per batch of services). It is called before Add for the services of a round.
func (f *Folder) Resume(ctx context.Context, svcs []models.ServiceKey, now time.Time) error {
	f.mu.Lock()
	var todo []models.ServiceKey
	for _, id := range svcs {
		if !f.resumed[id] {
			todo = append(todo, id)
		}
	}
	f.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	rows, err := f.db.RecentUsageBuckets(ctx, todo, now.Add(-resumeWindow).Unix())
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range todo {
		f.resumed[id] = true
		row, ok := rows[id]
		if !ok || f.state[id] != nil {
			continue
		}
		f.state[id] = &serviceState{bucket: row, open: true}
	}
	return nil
}

// Add folds one sample into its service's bucket. A sample older than the service's open
// bucket, or not newer than its latest sample, is dropped (it would rewrite a bucket already
// written, or count a reading twice).
func (f *Folder) Add(s Sample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := s.Key()
	f.resumed[k] = true
	st := f.state[k]
	if st == nil {
		st = &serviceState{}
		f.state[k] = st
	}
	start := BucketStart(s.At).Unix()
	b := &st.bucket
	if st.open && start < b.BucketStart {
		return
	}
	if st.open && s.At.Unix() <= b.LastSample {
		return
	}
	// Deltas against the previous reading, which may sit in the previous bucket.
	var dIn, dOut *int64
	if b.LastNetIn != nil && b.LastNetOut != nil {
		prevIn, prevOut := *b.LastNetIn, *b.LastNetOut
		if b.LastUptime != nil && s.Uptime < *b.LastUptime {
			prevIn, prevOut = 0, 0 // the guest restarted: its counters started again from zero
		}
		dIn = ptr(delta(prevIn, s.NetIn))
		dOut = ptr(delta(prevOut, s.NetOut))
	}
	if !st.open || start > b.BucketStart {
		if st.dirty {
			f.closed = append(f.closed, *b)
		}
		*b = models.UsageBucket{ClientID: s.ClientID, ServiceID: s.ServiceID, BucketStart: start,
			LastNetIn: b.LastNetIn, LastNetOut: b.LastNetOut, LastUptime: b.LastUptime}
		st.open = true
	}
	b.Cluster, b.Node, b.VMID, b.GuestType = s.Cluster, s.Node, s.VMID, s.GuestType
	b.Samples++
	if s.Swap != nil {
		b.SwapSamples++
		b.SwapSum += *s.Swap
		b.SwapMax = maxPtr(b.SwapMax, *s.Swap)
	}
	if s.SwapLimit != nil {
		b.SwapLimit = ptr(*s.SwapLimit)
	}
	b.MemSum += s.Mem
	b.MemMax = maxPtr(b.MemMax, s.Mem)
	b.CPUSum += s.CPU
	b.DiskMax = maxPtr(b.DiskMax, s.Disk)
	if dIn != nil {
		b.NetIn = addPtr(b.NetIn, *dIn)
		b.NetOut = addPtr(b.NetOut, *dOut)
	}
	b.LastNetIn, b.LastNetOut, b.LastUptime = ptr(s.NetIn), ptr(s.NetOut), ptr(s.Uptime)
	b.LastSample = s.At.Unix()
	st.dirty = true

	if s.Swap != nil {
		st.window = append(st.window, windowPoint{at: s.At, swap: *s.Swap})
	}
	cut := s.At.Add(-BucketWidth)
	i := 0
	for i < len(st.window) && !st.window[i].at.After(cut) {
		i++
	}
	st.window = st.window[i:]
}

// delta is the growth of a counter from prev to cur; a counter below its previous value started
// again from zero, so the growth is cur itself.
func delta(prev, cur int64) int64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// SwapWindow returns the swap average and maximum over the service's samples of the last five
// minutes; ok is false when there is none.
func (f *Folder) SwapWindow(k models.ServiceKey) (w Window, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state[k]
	if st == nil || len(st.window) == 0 {
		return Window{}, false
	}
	var sum int64
	w.Max = st.window[0].swap
	for _, p := range st.window {
		sum += p.swap
		w.Max = max(w.Max, p.swap)
	}
	w.Samples = len(st.window)
	w.Avg = sum / int64(w.Samples)
	return w, true
}

// Retain drops the in-memory state of services not in keep (terminated, no longer managed);
// their unwritten buckets are still written by the next Flush, and stored buckets stay.
func (f *Folder) Retain(keep map[models.ServiceKey]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, st := range f.state {
		if keep[id] {
			continue
		}
		if st.dirty {
			f.closed = append(f.closed, st.bucket)
		}
		delete(f.state, id)
	}
	for id := range f.resumed {
		if !keep[id] {
			delete(f.resumed, id)
		}
	}
}

// Flush writes every bucket changed since the last flush in batched upserts. On failure the
// buckets stay pending and the next flush writes them again (an upsert of the same bucket is
// harmless).
func (f *Folder) Flush(ctx context.Context) (int, error) {
	f.mu.Lock()
	batch := append([]models.UsageBucket(nil), f.closed...)
	for _, st := range f.state {
		if st.dirty {
			batch = append(batch, st.bucket)
			st.dirty = false
		}
	}
	f.closed = nil
	f.mu.Unlock()
	if len(batch) == 0 {
		return 0, nil
	}
	sort.Slice(batch, func(i, j int) bool {
		if batch[i].ServiceID != batch[j].ServiceID {
			return batch[i].ServiceID < batch[j].ServiceID
		}
		if batch[i].ClientID != batch[j].ClientID {
			return batch[i].ClientID < batch[j].ClientID
		}
		return batch[i].BucketStart < batch[j].BucketStart
	})
	if err := f.db.UpsertUsageBuckets(ctx, batch); err != nil {
		f.mu.Lock()
		for i := range batch {
			st := f.state[batch[i].Key()]
			if st != nil && st.bucket.BucketStart == batch[i].BucketStart {
				st.dirty = true
			} else {
				f.closed = append(f.closed, batch[i])
			}
		}
		f.mu.Unlock()
		return 0, err
	}
	return len(batch), nil
}

func ptr[T any](v T) *T { return &v }

func maxPtr(p *int64, v int64) *int64 {
	if p == nil || v > *p {
		return ptr(v)
	}
	return p
}

func addPtr(p *int64, v int64) *int64 {
	if p == nil {
		return ptr(v)
	}
	return ptr(*p + v)
}
