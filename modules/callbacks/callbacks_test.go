package callbacks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/callbacks"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server"
	"pvebill/server/config"
)

const (
	clientID       = "whmcs"
	callbackSecret = "callback-secret-0123456789"
)

// receiver is a billing system's callback endpoint: it checks every request with the server's
// own signature verifier and counts what it accepted per event id.
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	fail    int // answer 500 to this many requests first
	seen    map[string]int
	bodies  map[string][]string
	events  map[string]callbacks.Event
	badSigs int
}

func newReceiver(t *testing.T, fail int) *receiver {
	r := &receiver{t: t, fail: fail, seen: map[string]int{}, bodies: map[string][]string{}, events: map[string]callbacks.Event{}}
	verify := server.NewClients([]config.Client{{ID: clientID, Secret: callbackSecret}})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		_, err := verify.Verify(req.Header.Get(callbacks.HeaderKey), req.Header.Get(callbacks.HeaderTimestamp),
			req.Header.Get(callbacks.HeaderSignature), req.Method, req.URL.RequestURI(), body, time.Now())
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.badSigs++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev callbacks.Event
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get(callbacks.HeaderEventID) {
			r.t.Errorf("event body %s, header id %q: %v", body, req.Header.Get(callbacks.HeaderEventID), err)
		}
		r.bodies[ev.ID] = append(r.bodies[ev.ID], string(body))
		if r.fail > 0 {
			r.fail--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		r.seen[ev.ID]++
		r.events[ev.ID] = ev
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string {
	return r.srv.URL + "/modules/servers/pvebill/callback.php?src=pvebill"
}

func (r *receiver) accepted() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

// finishedOp writes a service and an operation that ended in state.
func finishedOp(t *testing.T, db *models.DB, client, serviceID, action, state string) *models.Operation {
	t.Helper()
	ctx := context.Background()
	if _, err := db.GetService(ctx, models.ServiceKey{ClientID: client, ServiceID: serviceID}); err != nil {
		if err := db.InsertService(ctx, &models.Service{ServiceID: serviceID, ClientID: client, Plan: "ct-2g",
			GuestType: "container", State: models.ServiceActive}); err != nil {
			t.Fatal(err)
		}
	}
	op := &models.Operation{ServiceID: serviceID, ClientID: client, Action: action, Payload: "{}"}
	if err := db.InsertOperation(ctx, op); err != nil {
		t.Fatal(err)
	}
	now := models.Now()
	dbtest.Exec(t, db, "UPDATE operations SET state = ?, stage = ?, finished_at = ?, updated_at = ? WHERE id = ?",
		state, "start", now, now, op.ID)
	if state != models.OpSucceeded {
		dbtest.Exec(t, db, "UPDATE operations SET error_code = ?, error_detail = ? WHERE id = ?",
			"proxmox_task_failed", "The Proxmox task failed: disk full.", op.ID)
	}
	op, err := db.GetOperation(ctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func newDispatcher(db *models.DB, url string, reg prometheus.Registerer, owner string, tweak func(*callbacks.Options)) *callbacks.Dispatcher {
	o := callbacks.Options{DB: db, Owner: owner,
		Targets:      []callbacks.Target{{ClientID: clientID, URL: url, Secret: callbackSecret}, {ClientID: "shop"}},
		PollInterval: 10 * time.Millisecond, FirstBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		AttemptTimeout: 2 * time.Second, Lease: 5 * time.Second}
	if reg != nil {
		o.Metrics = callbacks.NewMetrics(reg)
	}
	if tweak != nil {
		tweak(&o)
	}
	return callbacks.New(o)
}

// moreRounds waits until each dispatcher has completed two more rounds than now: the first may
// have begun before this call, the second began after it, so whatever they were going to send of
// the rows as they are now, they have sent, and recorded.
func moreRounds(t *testing.T, ds ...*callbacks.Dispatcher) {
	t.Helper()
	until := make([]int64, len(ds))
	for i, d := range ds {
		until[i] = d.Rounds() + 2
	}
	poll.Until(t, 10*time.Second, "two more delivery rounds", func() bool {
		for i, d := range ds {
			if d.Rounds() < until[i] {
				return false
			}
		}
		return true
	})
}

func deliveries(t *testing.T, db *models.DB, f models.CallbackFilter) []models.CallbackDelivery {
	t.Helper()
	out, err := db.ListCallbackDeliveries(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every terminal state gets one signed event that the server's own verifier accepts; other
// clients and unfinished operations get none; sweeping again writes nothing.
func TestSweepAndSignedDelivery(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		rcv := newReceiver(t, 0)
		ok := finishedOp(t, db, clientID, "whmcs-1", "create", models.OpSucceeded)
		failed := finishedOp(t, db, clientID, "whmcs-2", "create", models.OpFailed)
		recon := finishedOp(t, db, clientID, "whmcs-3", "terminate", models.OpNeedsReconciliation)
		finishedOp(t, db, "shop", "shop-1", "create", models.OpSucceeded)
		if err := db.InsertOperation(ctx, &models.Operation{ServiceID: "whmcs-1", ClientID: clientID, Action: "suspend", Payload: "{}"}); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		d := newDispatcher(db, rcv.url(), reg, "a", nil)
		n, err := d.Sweep(ctx)
		if err != nil || n != 3 {
			t.Fatalf("sweep wrote %d, %v; want 3", n, err)
		}
		if n, err := d.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("second sweep wrote %d, %v; want 0", n, err)
		}
		if sent, err := d.DeliverDue(ctx); err != nil || sent != 3 {
			t.Fatalf("delivered %d, %v", sent, err)
		}
		if rcv.badSigs != 0 {
			t.Fatalf("%d requests failed signature verification", rcv.badSigs)
		}
		byOp := map[string]callbacks.Event{}
		for id, c := range rcv.accepted() {
			if c != 1 {
				t.Errorf("event %s accepted %d times", id, c)
			}
			byOp[rcv.events[id].Operation.ID] = rcv.events[id]
		}
		if len(byOp) != 3 {
			t.Fatalf("events for %d operations, want 3: %v", len(byOp), byOp)
		}
		if ev := byOp[ok.ID]; ev.Type != callbacks.EventType || ev.Operation.State != models.OpSucceeded || ev.Operation.Error != nil ||
			ev.Service.ServiceID != "whmcs-1" || ev.Service.State != models.ServiceActive || ev.Operation.FinishedAt == nil {
			t.Errorf("succeeded event %+v", ev)
		}
		if ev := byOp[failed.ID]; ev.Operation.State != models.OpFailed || ev.Operation.Error == nil ||
			ev.Operation.Error.Code != "proxmox_task_failed" || !strings.Contains(ev.Operation.Error.Detail, "disk full") {
			t.Errorf("failed event %+v", ev)
		}
		if ev := byOp[recon.ID]; ev.Operation.State != models.OpNeedsReconciliation || ev.Operation.Action != "terminate" {
			t.Errorf("needs_reconciliation event %+v", ev)
		}
		for _, dl := range deliveries(t, db, models.CallbackFilter{}) {
			if dl.State != models.CallbackDelivered || dl.Attempts != 1 || dl.DeliveredAt == nil || len(dl.AttemptLog) != 1 ||
				dl.AttemptLog[0].Status == nil || *dl.AttemptLog[0].Status != http.StatusNoContent ||
				dl.AttemptLog[0].URL != callbacks.RedactURL(rcv.url()) { // query values redacted (R48)
				t.Errorf("delivery %+v", dl)
			}
		}
		if got := count(t, reg, "delivered"); got != 3 {
			t.Errorf("delivered counter %v", got)
		}
	})
}

// count reads pvebill_callback_deliveries_total{result}.
func count(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_callback_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no pvebill_callback_deliveries_total{result=%q}", result)
	return 0
}

// Failed attempts are retried with a growing wait until one succeeds; every attempt carries
// the same event id and body, and each is logged.
func TestRetriesAfterFailures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		rcv := newReceiver(t, 2)
		op := finishedOp(t, db, clientID, "whmcs-9", "suspend", models.OpSucceeded)
		reg := prometheus.NewRegistry()
		d := newDispatcher(db, rcv.url(), reg, "a", nil)
		d.Start(context.Background())
		defer d.Stop(context.Background())
		poll.Until(t, 10*time.Second, "delivery", func() bool { return len(rcv.accepted()) == 1 })
		d.Stop(context.Background())
		list := deliveries(t, db, models.CallbackFilter{OperationID: op.ID})
		if len(list) != 1 {
			t.Fatalf("%d deliveries", len(list))
		}
		dl := list[0]
		if dl.State != models.CallbackDelivered || dl.Attempts != 3 || len(dl.AttemptLog) != 3 {
			t.Fatalf("delivery %+v", dl)
		}
		for i, a := range dl.AttemptLog {
			want := http.StatusInternalServerError
			if i == 2 {
				want = http.StatusNoContent
			}
			if a.Attempt != i+1 || a.Status == nil || *a.Status != want || (i < 2) != (a.Error != nil) {
				t.Errorf("attempt %d: %+v", i+1, a)
			}
		}
		if gap := dl.AttemptLog[2].At.Sub(dl.AttemptLog[1].At); gap < 20*time.Millisecond {
			t.Errorf("second retry after %v; the backoff doubles from 10ms", gap)
		}
		rcv.mu.Lock()
		bodies := rcv.bodies[dl.ID]
		rcv.mu.Unlock()
		if len(bodies) != 3 || bodies[0] != bodies[1] || bodies[1] != bodies[2] {
			t.Fatalf("bodies differ between attempts: %q", bodies)
		}
		if f, ok := count(t, reg, "failed"), count(t, reg, "delivered"); f != 2 || ok != 1 {
			t.Errorf("counters failed=%v delivered=%v", f, ok)
		}
	})
}

// A receiver that never answers 2xx is given up on once the window closes.
func TestExpiresAfterWindow(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		rcv := newReceiver(t, 1<<30)
		finishedOp(t, db, clientID, "whmcs-5", "create", models.OpFailed)
		reg := prometheus.NewRegistry()
		d := newDispatcher(db, rcv.url(), reg, "a", func(o *callbacks.Options) { o.Window = 150 * time.Millisecond })
		d.Start(context.Background())
		defer d.Stop(context.Background())
		poll.Until(t, 10*time.Second, "expiry", func() bool {
			l := deliveries(t, db, models.CallbackFilter{State: models.CallbackExpired})
			return len(l) == 1
		})
		d.Stop(context.Background())
		if got := count(t, reg, "expired"); got != 1 {
			t.Errorf("expired counter %v", got)
		}
		if got := count(t, reg, "failed"); got < 1 {
			t.Errorf("failed counter %v", got)
		}
		if len(rcv.accepted()) != 0 {
			t.Fatal("nothing was accepted")
		}
	})
}

// Two dispatchers (two replicas) on one database deliver every event exactly once while the
// receiver answers 2xx.
func TestNoDuplicatesAcrossReplicas(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		rcv := newReceiver(t, 0)
		const n = 24
		ops := map[string]bool{}
		for i := 0; i < n; i++ {
			ops[finishedOp(t, db, clientID, "whmcs-"+string(rune('a'+i)), "create", models.OpSucceeded).ID] = true
		}
		a := newDispatcher(db, rcv.url(), nil, "replica-a", nil)
		b := newDispatcher(db, rcv.url(), nil, "replica-b", nil)
		a.Start(t.Context())
		b.Start(t.Context())
		defer a.Stop(t.Context())
		defer b.Stop(t.Context())
		poll.Until(t, 10*time.Second, "all events", func() bool { return len(rcv.accepted()) == n })
		// Give a duplicate the chance to show up before judging: both replicas run their delivery
		// rounds again over the rows as they are now.
		moreRounds(t, a, b)
		a.Stop(t.Context())
		b.Stop(t.Context())
		seenOps := map[string]bool{}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for id, c := range rcv.seen {
			if c != 1 {
				t.Errorf("event %s delivered %d times", id, c)
			}
			op := rcv.events[id].Operation.ID
			if seenOps[op] || !ops[op] {
				t.Errorf("operation %s announced twice or unknown", op)
			}
			seenOps[op] = true
		}
	})
}

// Rows are the queue: an event that failed before a restart, and an operation that ended while
// no dispatcher ran, are both delivered by the next process on the same database. A process that
// died between claiming and recording leaves a lease that expires; the event is then sent again
// (at-least-once, same event id).
func TestSurvivesRestart(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, dialect)
			open := func() *models.DB {
				db, err := models.Open(dialect, dsn)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				return db
			}
			down := httptest.NewServer(http.NotFoundHandler())
			downURL := down.URL + "/callback"
			down.Close() // connection refused from now on

			db := open()
			first := finishedOp(t, db, clientID, "whmcs-r1", "create", models.OpSucceeded)
			d1 := newDispatcher(db, downURL, nil, "before", func(o *callbacks.Options) { o.FirstBackoff = time.Hour; o.MaxBackoff = time.Hour })
			if _, err := d1.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := d1.DeliverDue(ctx); err != nil {
				t.Fatal(err)
			}
			// A third event is claimed by a process that dies before recording anything.
			crashed := finishedOp(t, db, clientID, "whmcs-r3", "terminate", models.OpSucceeded)
			if _, err := d1.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			claimed, err := db.ClaimCallbackDeliveries(ctx, "crashed", 200*time.Millisecond, 10)
			if err != nil || len(claimed) != 1 || claimed[0].OperationID != crashed.ID {
				t.Fatalf("claimed %+v, %v", claimed, err)
			}
			db.Close()

			db = open()
			defer db.Close()
			second := finishedOp(t, db, clientID, "whmcs-r2", "create", models.OpFailed)
			// The first event is due again now (as if its backoff had passed).
			now := models.Now()
			dbtest.Exec(t, db, "UPDATE callback_deliveries SET next_attempt_at = ?, updated_at = ? WHERE operation_id = ?", now, now, first.ID)
			rcv := newReceiver(t, 0)
			d2 := newDispatcher(db, rcv.url(), nil, "after", nil)
			d2.Start(ctx)
			defer d2.Stop(ctx)
			poll.Until(t, 10*time.Second, "three events after the restart", func() bool { return len(rcv.accepted()) == 3 })
			d2.Stop(ctx)
			got := map[string]string{}
			for id := range rcv.accepted() {
				got[rcv.events[id].Operation.ID] = id
			}
			for _, op := range []*models.Operation{first, second, crashed} {
				if got[op.ID] == "" {
					t.Errorf("operation %s (%s) was not announced after the restart", op.ID, op.ServiceID)
				}
			}
			if got[crashed.ID] != claimed[0].ID {
				t.Errorf("the re-sent event has a new id %s, want %s", got[crashed.ID], claimed[0].ID)
			}
			l := deliveries(t, db, models.CallbackFilter{OperationID: first.ID})
			if len(l) != 1 || l[0].Attempts != 2 || l[0].AttemptLog[0].Status != nil || l[0].AttemptLog[0].Error == nil {
				t.Fatalf("first delivery %+v", l)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	first, limit := 10*time.Second, time.Hour
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second}
	for i, w := range want {
		if got := callbacks.Backoff(i+1, first, limit); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := callbacks.Backoff(40, first, limit); got != limit {
		t.Errorf("Backoff(40) = %v, want the cap", got)
	}
}

// The callback signature is the server's request signature, byte for byte.
func TestSignMatchesServer(t *testing.T) {
	body := []byte(`{"id":"x"}`)
	if a, b := callbacks.Sign([]byte("k"), "1700000000", "POST", "/cb?a=1", body), server.Sign([]byte("k"), "1700000000", "POST", "/cb?a=1", body); a != b {
		t.Fatalf("%s != %s", a, b)
	}
}

// Delivered and expired rows older than the retention go, with their attempts; pending rows stay
// whatever their age.
func TestPurgeKeepsPending(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		rcv := newReceiver(t, 0)
		finishedOp(t, db, clientID, "whmcs-p1", "create", models.OpSucceeded)
		d := newDispatcher(db, rcv.url(), nil, "a", nil)
		if _, err := d.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := d.DeliverDue(ctx); err != nil {
			t.Fatal(err)
		}
		pending := finishedOp(t, db, clientID, "whmcs-p2", "create", models.OpSucceeded)
		if _, err := d.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		n, err := db.PurgeCallbackDeliveries(ctx, models.Now().Add(time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want the delivered one", n, err)
		}
		left := deliveries(t, db, models.CallbackFilter{})
		if len(left) != 1 || left[0].OperationID != pending.ID || left[0].State != models.CallbackPending {
			t.Fatalf("left %+v", left)
		}
		if attempts := dbtest.Count(t, db, "SELECT COUNT(*) FROM callback_attempts"); attempts != 0 {
			t.Fatalf("%d attempts left", attempts)
		}
	})
}
