package callbacks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
)

// Headers of a callback request. Key, timestamp and signature are the API's own names.
const (
	HeaderKey       = "X-Pvebill-Key"
	HeaderTimestamp = "X-Pvebill-Timestamp"
	HeaderSignature = "X-Pvebill-Signature"
	HeaderEventID   = "X-Pvebill-Event-Id"
	// EventType is the type of every event sent today.
	EventType = "operation.finished"
)

// Defaults of Options.
const (
	DefaultPollInterval   = time.Second
	DefaultLease          = time.Minute
	DefaultAttemptTimeout = 10 * time.Second
	DefaultFirstBackoff   = 10 * time.Second
	DefaultMaxBackoff     = time.Hour
	DefaultWindow         = 24 * time.Hour
	DefaultRetention      = 7 * 24 * time.Hour
	// sweepSlack re-reads operations that finished this long before the previous sweep began:
	// an operation finished by another replica (or committed late) is not skipped.
	sweepSlack = 2 * time.Minute
	sweepBatch = 200
	claimBatch = 16
)

// Target is where one client's events go. URL may carry credentials (a user and password, a
// token in its query): they are sent, never stored or logged (RedactURL, R48).
type Target struct {
	ClientID string
	URL      string
	Secret   string
}

// Options configure a Dispatcher. Only DB and Targets are required.
type Options struct {
	DB      *models.DB
	Targets []Target
	Log     *slog.Logger
	Metrics *Metrics
	// Client sends the POSTs; nil uses a client with AttemptTimeout and no redirects followed.
	Client *http.Client
	// Owner names this process in lease_owner (unique per replica).
	Owner          string
	PollInterval   time.Duration
	Lease          time.Duration
	AttemptTimeout time.Duration
	// FirstBackoff is the wait after the first failed attempt; each further failure doubles it
	// up to MaxBackoff.
	FirstBackoff time.Duration
	MaxBackoff   time.Duration
	// Window is how long a delivery is retried after its row was written (24 h).
	Window time.Duration
	// Retention is how long delivered and expired rows stay visible to the admin API.
	Retention time.Duration
	// Concurrency bounds the POSTs in flight.
	Concurrency int
}

// Dispatcher writes delivery rows for finished operations and delivers them.
type Dispatcher struct {
	o       Options
	targets map[string]Target
	ids     []string

	mu         sync.Mutex
	sweptSince time.Time // the next sweep reads operations finished since then
	lastPurge  time.Time

	stop     chan struct{}
	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	// rounds counts the loop's completed rounds (Rounds).
	rounds atomic.Int64
}

// New builds a dispatcher; it does nothing until Start (or explicit Sweep / DeliverDue calls).
func New(o Options) *Dispatcher {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Owner == "" {
		o.Owner = "pvebill-" + models.NewID()[:8]
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PollInterval, DefaultPollInterval)
	def(&o.Lease, DefaultLease)
	def(&o.AttemptTimeout, DefaultAttemptTimeout)
	def(&o.FirstBackoff, DefaultFirstBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.Window, DefaultWindow)
	def(&o.Retention, DefaultRetention)
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.AttemptTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	d := &Dispatcher{o: o, targets: map[string]Target{}, stop: make(chan struct{})}
	for _, t := range o.Targets {
		if t.URL == "" {
			continue
		}
		d.targets[t.ClientID] = t
		d.ids = append(d.ids, t.ClientID)
	}
	return d
}

// Rounds is how many rounds the loop started by Start has completed: a sweep, then every
// delivery then due sent and its outcome recorded, then the purge. A test that must show that
// nothing more is sent waits for two more rounds (the first may have begun before it looked)
// instead of sleeping for a few poll intervals.
func (d *Dispatcher) Rounds() int64 { return d.rounds.Load() }

// Enabled reports whether any client has a callback URL.
func (d *Dispatcher) Enabled() bool { return len(d.ids) > 0 }

// Start runs the loop: sweep, deliver what is due, purge old rows, then wait for the poll
// interval. It returns at once when no client has a callback URL.
func (d *Dispatcher) Start(ctx context.Context) {
	if !d.Enabled() {
		return
	}
	ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	d.wg.Add(1)
	go d.loop(ctx)
}

// Stop ends the loop, letting POSTs in flight finish until ctx ends. A delivery cut short keeps
// its row; its lease expires and it is sent again.
func (d *Dispatcher) Stop(ctx context.Context) {
	d.stopOnce.Do(func() { close(d.stop) })
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if d.cancel != nil {
			d.cancel()
		}
		<-done
	}
	if d.cancel != nil {
		d.cancel()
	}
}

func (d *Dispatcher) loop(ctx context.Context) {
	defer d.wg.Done()
	t := time.NewTicker(d.o.PollInterval)
	defer t.Stop()
	for {
		d.round(ctx)
		d.rounds.Add(1)
		select {
		case <-d.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d *Dispatcher) round(ctx context.Context) {
	if _, err := d.Sweep(ctx); err != nil && ctx.Err() == nil {
		d.o.Log.Error("callback sweep", "err", err)
	}
	if _, err := d.DeliverDue(ctx); err != nil && ctx.Err() == nil {
		d.o.Log.Error("callback delivery", "err", err)
	}
	d.mu.Lock()
	purge := time.Since(d.lastPurge) > time.Hour
	if purge {
		d.lastPurge = time.Now()
	}
	d.mu.Unlock()
	if purge {
		if n, err := d.o.DB.PurgeCallbackDeliveries(ctx, models.Now().Add(-d.o.Retention)); err != nil && ctx.Err() == nil {
			d.o.Log.Error("callback purge", "err", err)
		} else if n > 0 {
			d.o.Log.Info("purged old callback deliveries", "count", n)
		}
	}
}

// Sweep writes a pending delivery row for every operation of a client with a callback URL that
// ended since the previous sweep (the first sweep looks back over the whole retry window) and
// has none yet. It is idempotent: a row is unique per operation end. It returns how many rows
// it wrote.
func (d *Dispatcher) Sweep(ctx context.Context) (int, error) {
	if !d.Enabled() {
		return 0, nil
	}
	started := models.Now()
	d.mu.Lock()
	since := d.sweptSince
	d.mu.Unlock()
	if since.IsZero() {
		since = started.Add(-d.o.Window)
	}
	written := 0
	for {
		ops, err := d.o.DB.OperationsAwaitingCallback(ctx, d.ids, since, sweepBatch)
		if err != nil {
			return written, err
		}
		for i := range ops {
			ok, err := d.enqueue(ctx, &ops[i])
			if err != nil {
				return written, err
			}
			if ok {
				written++
			}
		}
		if len(ops) < sweepBatch {
			break
		}
	}
	d.mu.Lock()
	d.sweptSince = started.Add(-sweepSlack)
	d.mu.Unlock()
	return written, nil
}

func (d *Dispatcher) enqueue(ctx context.Context, op *models.Operation) (bool, error) {
	id := models.NewID()
	ev := Event{ID: id, Type: EventType, Operation: operationOf(op), Service: EventService{ServiceID: op.ServiceID}}
	if svc, err := d.o.DB.GetService(ctx, op.Key()); err == nil {
		ev.Service.State = svc.State
	} else if !errors.Is(err, models.ErrNotFound) {
		return false, err
	}
	ev.CreatedAt = models.Now()
	body, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	return d.o.DB.InsertCallbackDelivery(ctx, &models.CallbackDelivery{ID: id, ClientID: op.ClientID, OperationID: op.ID,
		OperationState: op.State, ServiceID: op.ServiceID, Body: string(body)})
}

// DeliverDue claims the deliveries that are due and POSTs them (bounded concurrency), recording
// each attempt. It returns how many it attempted.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	total := 0
	for {
		batch, err := d.o.DB.ClaimCallbackDeliveries(ctx, d.o.Owner, d.o.Lease, claimBatch)
		if err != nil {
			return total, err
		}
		if len(batch) == 0 {
			return total, nil
		}
		sem := make(chan struct{}, d.o.Concurrency)
		var wg sync.WaitGroup
		for i := range batch {
			sem <- struct{}{}
			wg.Add(1)
			go func(dl *models.CallbackDelivery) {
				defer wg.Done()
				defer func() { <-sem }()
				d.attempt(ctx, dl)
			}(&batch[i])
		}
		wg.Wait()
		total += len(batch)
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

// attempt sends one delivery once and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, dl *models.CallbackDelivery) {
	log := d.o.Log.With("event_id", dl.ID, "operation_id", dl.OperationID, "client_id", dl.ClientID)
	t, ok := d.targets[dl.ClientID]
	start := time.Now()
	var (
		status *int
		errMsg *string
		sentTo string
	)
	if !ok {
		msg := "the client has no callback_url configured any more"
		errMsg = &msg
	} else {
		sentTo = RedactURL(t.URL)
		code, err := d.post(ctx, t, dl)
		if code > 0 {
			status = &code
		}
		if err != nil {
			msg := err.Error()
			errMsg = &msg
		}
	}
	if ctx.Err() != nil {
		// Shutting down: leave the row leased; the lease expires and the event is sent again.
		return
	}
	now := time.Now()
	var out models.CallbackOutcome
	result := ResultDelivered
	switch {
	case errMsg == nil:
		out.State = models.CallbackDelivered
	case now.Sub(dl.CreatedAt) >= d.o.Window:
		out.State, result = models.CallbackExpired, ResultExpired
	default:
		out.State, result = models.CallbackPending, ResultFailed
		out.NextAttemptAt = now.Add(Backoff(dl.Attempts+1, d.o.FirstBackoff, d.o.MaxBackoff))
	}
	a := models.CallbackAttempt{At: start, URL: sentTo, Status: status, Error: errMsg, DurationMS: time.Since(start).Milliseconds()}
	if err := d.o.DB.RecordCallbackAttempt(context.WithoutCancel(ctx), dl.ID, d.o.Owner, a, out); err != nil {
		log.Error("record callback attempt", "err", err)
		return
	}
	d.o.Metrics.delivered(result)
	switch result {
	case ResultDelivered:
		log.Info("callback delivered", "attempt", dl.Attempts+1)
	case ResultExpired:
		log.Warn("callback expired without delivery", "attempts", dl.Attempts+1, "err", *errMsg)
	default:
		log.Warn("callback attempt failed", "attempt", dl.Attempts+1, "next_attempt_at", out.NextAttemptAt, "err", *errMsg)
	}
}

// post sends the event; a 2xx answer is success. It returns the status code (0 without an
// answer), and an error that names the URL only redacted (R48).
func (d *Dispatcher) post(ctx context.Context, t Target, dl *models.CallbackDelivery) (int, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return 0, fmt.Errorf("callback_url: %w", redactErr(err, RedactURL(t.URL)))
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.AttemptTimeout)
	defer cancel()
	body := []byte(dl.Body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return 0, redactErr(err, RedactURL(t.URL))
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pvebill-callbacks/1")
	req.Header.Set(HeaderKey, t.ClientID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign([]byte(t.Secret), ts, http.MethodPost, u.RequestURI(), body))
	req.Header.Set(HeaderEventID, dl.ID)
	resp, err := d.o.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post: %w", redactErr(err, RedactURL(t.URL)))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// Sign is the v1 signature of the API (docs/api.md Conventions): hex HMAC-SHA256 over timestamp
// "\n" METHOD "\n" request URI with query "\n" raw body, prefixed "v1=".
func Sign(secret []byte, timestamp, method, requestURI string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp + "\n" + method + "\n" + requestURI + "\n"))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Backoff is the wait after the nth failed attempt (n ≥ 1): first, doubled each time, capped.
func Backoff(n int, first, limit time.Duration) time.Duration {
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	if d > limit {
		d = limit
	}
	return d
}

// Attempt results, the label of pvebill_callback_deliveries_total.
const (
	ResultDelivered = "delivered" // a 2xx answer
	ResultFailed    = "failed"    // no 2xx; another attempt is scheduled
	ResultExpired   = "expired"   // no 2xx and the retry window is over
)

// Metrics are the dispatcher's Prometheus series.
type Metrics struct {
	total *prometheus.CounterVec
}

// NewMetrics registers the callback metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_callback_deliveries_total",
		Help: "Callback delivery attempts, by result (delivered, failed and retried later, expired)."}, []string{"result"})}
	for _, r := range []string{ResultDelivered, ResultFailed, ResultExpired} {
		m.total.WithLabelValues(r)
	}
	reg.MustRegister(m.total)
	return m
}

func (m *Metrics) delivered(result string) {
	if m != nil {
		m.total.WithLabelValues(result).Inc()
	}
}
