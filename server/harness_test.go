package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

// Secrets used by the harness; tests search logs for them.
const (
	billingSecret = "billing-secret-0123456789"
	otherSecret   = "other-secret-0123456789"
	shopSecret    = "shop-secret-0123456789"
	adminSecret   = "admin-secret-0123456789"
)

type harness struct {
	t    *testing.T
	db   *models.DB
	srv  *server.Server
	exec *executor.Executor
	http *httptest.Server
	logs *stacktest.LogBuffer
	now  time.Time
	mu   sync.Mutex
	// release lets a test hold test-action runs until it says so.
	gate chan struct{}
	// sent counts the requests signed per client, method, URI, timestamp and body.
	sent   map[string]int
	sentMu sync.Mutex
}

// testJob is the body of the test-only action route.
type testJob struct {
	ServiceID string `json:"service_id" validate:"required,serviceid"`
	SleepMS   int    `json:"sleep_ms" validate:"gte=0,lte=5000"`
	Fail      bool   `json:"fail"`
	Gate      bool   `json:"gate"`
	Password  string `json:"password" validate:"omitempty,min=5,max=128"`
	Note      string `json:"note" validate:"omitempty,max=64"`
}

var testAction = func(h *harness) executor.Action {
	return executor.Action{
		Name:         "test",
		Stages:       []executor.Stage{"precheck", "work", "destroy", "after"},
		Irreversible: "destroy",
		Run: func(ctx context.Context, r *executor.Run) error {
			var p testJob
			if err := r.Payload(&p); err != nil {
				return err
			}
			if err := r.Stage(ctx, "precheck"); err != nil {
				return err
			}
			if p.Gate {
				select {
				case <-h.gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if err := r.Stage(ctx, "work"); err != nil {
				return err
			}
			select {
			case <-time.After(time.Duration(p.SleepMS) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
			if p.Fail {
				return i18n.NewProblem(502, i18n.CodeProxmoxTaskFailed)
			}
			r.SetResult(map[string]any{"ok": true})
			return nil
		},
	}
}

type harnessOpts struct {
	metricsToken string
	tls          config.TLS
	clusters     []config.Cluster
}

func newHarness(t *testing.T, dialect string) *harness {
	t.Helper()
	return newHarnessWith(t, dialect, nil)
}

func newHarnessWith(t *testing.T, dialect string, mod func(*harnessOpts)) *harness {
	t.Helper()
	var ho harnessOpts
	if mod != nil {
		mod(&ho)
	}
	h := &harness{t: t, now: time.Now(), logs: &stacktest.LogBuffer{}, gate: make(chan struct{})}
	h.db = dbtest.Open(t, dialect)
	cfg := config.Defaults()
	cfg.Clients = []config.Client{
		{ID: "whmcs", Secret: billingSecret, Scopes: []string{"billing"}},
		{ID: "other", Secret: otherSecret, Scopes: []string{"billing"}},
		{ID: "shop", Secret: shopSecret, Scopes: []string{"storefront"}},
		{ID: "ops", Secret: adminSecret, Scopes: []string{"admin"}},
	}
	cfg.Metrics.BearerToken = ho.metricsToken
	cfg.TLS, cfg.Clusters = ho.tls, ho.clusters
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(h.logs, testWriter()), &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The bare harness wires no guest kind: every capability of its plans reads as not built.
	st := stack.New(stack.Options{DB: h.db, Log: log, Metrics: prometheus.NewRegistry(),
		Executor: stacktest.Executor("test-" + dialect),
		Actions:  []executor.Action{testAction(h)}})
	h.exec = st.Exec
	spec, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	so := serve.Options(st, cfg)
	so.OpenAPI, so.Now, so.WaitRecheck = spec, h.clock, 200*time.Millisecond
	h.srv = server.New(so)
	registerTestRoutes(h)
	h.exec.Start(context.Background())
	h.http = httptest.NewServer(h.srv)
	t.Cleanup(func() {
		h.http.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		select {
		case <-h.gate:
		default:
			close(h.gate)
		}
		h.exec.Stop(ctx)
	})
	return h
}

func testWriter() io.Writer {
	if os.Getenv("PVEBILL_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(d)
}

// registerTestRoutes adds the test-only action route (not part of the product's route table).
func registerTestRoutes(h *harness) {
	g := h.srv.V1("billing")
	g.POST("/_test/jobs", func(c *gin.Context) {
		var body testJob
		if err := server.BindJSON(c, &body); err != nil {
			h.srv.WriteError(c, err)
			return
		}
		ctx := c.Request.Context()
		svc, err := h.db.GetClientService(ctx, server.ClientID(c), body.ServiceID)
		if errors.Is(err, models.ErrNotFound) {
			svc = &models.Service{ServiceID: body.ServiceID, ClientID: server.ClientID(c), State: models.ServiceActive}
			err = h.db.InsertService(ctx, svc)
		}
		if err != nil {
			h.srv.WriteError(c, err)
			return
		}
		if svc.ClientID != server.ClientID(c) {
			h.srv.WriteError(c, i18n.NewProblem(404, i18n.CodeNotFound))
			return
		}
		secret := body.Password
		body.Password = ""
		payload, _ := json.Marshal(body)
		op := &models.Operation{ServiceID: body.ServiceID, ClientID: server.ClientID(c), Action: "test", Payload: string(payload)}
		if err := h.db.InsertOperation(ctx, op); err != nil {
			h.srv.WriteError(c, err)
			return
		}
		h.exec.Secrets().Put(op.ID, map[string]string{"password": secret})
		h.srv.AcceptOperation(c, op)
	})
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return m
}

type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

// sign sets the signature headers of req (whose body is body) for client id with secret at
// time at, and the JSON content type when there is a body.
func sign(req *http.Request, id, secret string, at time.Time, body []byte) {
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set(server.HeaderKey, id)
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(secret), ts, req.Method, req.URL.RequestURI(), body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
}

// signed sends a request signed for client id with secret at the harness clock.
func (h *harness) signed(method, path, id, secret string, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	sign(req, id, secret, h.resignedAt(id, method, req.URL.RequestURI(), body), body)
	for _, o := range opts {
		o(req)
	}
	return h.do(req)
}

// resignedAt is the time a request is signed at: the harness clock, or for a request identical
// to one signed before, a second earlier per earlier copy. A billing system signs each retry
// anew, so a resent request carries a new signature (R47); tests of a replayed signature send
// one signed request twice through do.
func (h *harness) resignedAt(id, method, uri string, body []byte) time.Time {
	at := h.clock()
	key := strings.Join([]string{id, method, uri, strconv.FormatInt(at.Unix(), 10), string(body)}, "\n")
	h.sentMu.Lock()
	defer h.sentMu.Unlock()
	if h.sent == nil {
		h.sent = map[string]int{}
	}
	n := h.sent[key]
	h.sent[key] = n + 1
	return at.Add(-time.Duration(n) * time.Second)
}

func (h *harness) do(req *http.Request) response {
	h.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (h *harness) billing(method, path string, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	return h.signed(method, path, "whmcs", billingSecret, body, opts...)
}

// checkProblem asserts an answer is problem+json with status and code.
func checkProblem(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q; body %s", ct, r.Body)
	}
	m := r.json(t)
	if m["code"] != code {
		t.Fatalf("code %v, want %s; body %s", m["code"], code, r.Body)
	}
	if d, _ := m["detail"].(string); d == "" {
		t.Fatalf("empty detail: %s", r.Body)
	}
	if r.Header.Get("Content-Language") == "" {
		t.Fatalf("no Content-Language")
	}
	return m
}

// replicaDatabases opens two connections to one test database of dialect d, for two replicas;
// the first has the schema migrated.
func replicaDatabases(t *testing.T, d string) (*models.DB, *models.DB) {
	t.Helper()
	dsn := dbtest.DSN(t, d)
	open := func() *models.DB {
		db, err := models.Open(d, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	dbA := open()
	if _, err := dbA.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return dbA, open()
}
