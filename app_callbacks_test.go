package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/modules/callbacks"
	"pvebill/modules/executor"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server"
	"pvebill/server/config"
)

// The app wires the callback dispatcher from the config: an operation of a client with a
// callback_url is announced with a signed event; a client without one gets nothing; the
// counter is on /metrics.
func TestAppDeliversCallbacks(t *testing.T) {
	const secret = "app-callback-secret-0123"
	var mu sync.Mutex
	var events []callbacks.Event
	verify := server.NewClients([]config.Client{{ID: "whmcs", Secret: secret}})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := verify.Verify(r.Header.Get(callbacks.HeaderKey), r.Header.Get(callbacks.HeaderTimestamp),
			r.Header.Get(callbacks.HeaderSignature), r.Method, r.URL.RequestURI(), body, time.Now()); err != nil {
			t.Errorf("callback signature: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev callbacks.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("callback body %s: %v", body, err)
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}))
	defer rcv.Close()

	cfg := config.Defaults()
	cfg.Database = config.Database{Driver: models.SQLite, DSN: filepath.Join(t.TempDir(), "pvebill.db")}
	cfg.Clients = []config.Client{
		{ID: "whmcs", Secret: "app-client-secret-0123", Scopes: []string{config.ScopeBilling}, CallbackURL: rcv.URL + "/hook?x=1", CallbackSecret: secret},
		{ID: "shop", Secret: "app-shop-secret-0123", Scopes: []string{config.ScopeBilling}},
	}
	cfg.Listen = "127.0.0.1:0"
	// The operations are written behind the executor's back: it finds them by polling.
	cfg.Executor.PollInterval = 20 * time.Millisecond
	probe := executor.Action{Name: "callback_probe", Stages: []executor.Stage{"work"}, Run: func(ctx context.Context, r *executor.Run) error {
		return r.Stage(ctx, "work")
	}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := buildApp(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), stack.MigrateSchema, probe)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(client string) string {
		op := &models.Operation{ServiceID: client + "-1", ClientID: client, Action: "callback_probe", Payload: "{}"}
		if err := a.db.InsertOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		return op.ID
	}
	shop := insert("shop")
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.serve(ctx, ln) }()
	// The other client's operation ends before the whmcs one is written, so the sweep that
	// finds the whmcs one runs after it ended and would find it too, were it announced: its
	// callback would be sent in that round at the latest, and stopping the app waits for the
	// round. The delivery counted below thus proves the window for a wrong callback passed.
	poll.Until(t, 15*time.Second, "the other client's operation to end", func() bool {
		op, err := a.db.GetOperation(ctx, shop)
		if err != nil {
			t.Fatal(err)
		}
		return models.IsTerminal(op.State)
	})
	insert("whmcs")
	// The counter moves once the attempt is recorded, after the receiver answered.
	scrape := func() string {
		resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	const delivered = `pvebill_callback_deliveries_total{result="delivered"} 1`
	if !poll.Wait(15*time.Second, func() bool { return strings.Contains(scrape(), delivered) }) {
		t.Fatalf("no delivered callback on /metrics within 15 s:\n%s", scrape())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Operation.ServiceID != "whmcs-1" || events[0].Operation.State != models.OpSucceeded {
		t.Fatalf("events %+v", events)
	}
}
