package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	wiring "pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

const (
	billingID     = "whmcs"
	billingSecret = "bench-billing-secret-0123456789"
	debianTmpl    = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
)

// benchPlans is the catalog the provisioning scenarios use.
func benchPlans() []plans.Spec {
	return []plans.Spec{{Code: "ct-small", Name: "Container small", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
		Cores: new(1), MemoryMiB: new(512), DiskGiB: new(8), Storage: "local-lvm", Bridge: "vmbr0",
		OS: plans.OSCatalog{Container: map[string]string{"debian-12": debianTmpl}}}}
}

// stack is the real pvebill wiring (modules/stack) of the provisioning path: plans, modules,
// provisioning, executor and server.
type stack struct {
	db   *models.DB
	reg  *prometheus.Registry
	exec *executor.Executor
	prov *provision.Provisioner
	srv  *server.Server
}

func newStack(t *testing.T, db *models.DB, client *pve.Client, workers int, log *slog.Logger) *stack {
	t.Helper()
	st := &stack{db: db, reg: prometheus.NewRegistry()}
	w := wiring.New(wiring.Options{DB: db, Log: log, Metrics: st.reg, Kinds: wiring.Kinds(),
		Clusters: []kinds.Cluster{{Name: "default", Client: client}},
		Executor: executor.Config{Owner: "bench", Workers: workers, Lease: 30 * time.Second, PollInterval: time.Second}})
	if _, err := w.Plans.Import(context.Background(), benchPlans(), plans.SourceFile); err != nil {
		t.Fatal(err)
	}
	st.exec, st.prov = w.Exec, w.Provisioner
	cfg := config.Defaults()
	cfg.Clients = []config.Client{{ID: billingID, Secret: billingSecret, Scopes: []string{"billing"}}}
	st.srv = server.New(serve.Options(w, cfg))
	return st
}

// createBody is a create request body for a service id.
func createBody(id string) []byte {
	b, _ := json.Marshal(provision.CreateRequest{ServiceID: id, Plan: "ct-small", Hostname: "web-" + id + ".example.com",
		OS: "debian-12", RootPassword: "Sup3r-Secret-Root-pw",
		SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a bench@example"}})
	return b
}

// signedRequest builds a request signed as the billing client.
func signedRequest(method, url string, body []byte) *http.Request {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set(server.HeaderKey, billingID)
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(billingSecret), ts, method, req.URL.RequestURI(), body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// load sends n requests from conc clients and returns the throughput (requests a second) and the
// latencies. mk builds request i; every answer must have status want.
func load(t *testing.T, client *http.Client, n, conc, want int, mk func(i int) *http.Request) (float64, []time.Duration) {
	t.Helper()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				req := mk(i)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				b, _ := io.ReadAll(resp.Body)
				if err := resp.Body.Close(); err != nil {
					failed.Store(err.Error())
				}
				lat[i] = time.Since(t0)
				if resp.StatusCode != want {
					failed.Store(fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b))
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if f := failed.Load(); f != nil {
		t.Fatalf("load: %v", f)
	}
	return float64(n) / el.Seconds(), lat
}

func p99(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)*99)/100]
}

// pair measures the real and the baseline side of one comparison in alternating rounds, after
// one warm-up round of each (round -1, not counted), and returns the median throughput of each
// and the p99 of each side's pooled latencies.
func pair(rounds int, ours, base func(round int) (float64, []time.Duration)) (rt, bt float64, rp, bp time.Duration) {
	base(-1)
	ours(-1)
	var rts, bts []float64
	var rl, bl []time.Duration
	for i := range rounds {
		tp, l := base(i)
		bts, bl = append(bts, tp), append(bl, l...)
		tp, l = ours(i)
		rts, rl = append(rts, tp), append(rl, l...)
	}
	return median(rts), median(bts), p99(rl), p99(bl)
}

func webhook(t *testing.T, rep *Report) {
	const sc = "2 webhook"
	d := dialect(t)
	n, conc, rounds := scale(1500, 20), 8, scale(3, 1)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))

	// The real server: every route and middleware, the executor built but not started, so a
	// create stays queued and no Proxmox call is made.
	sim := pvesim.New(pvesim.Options{TokenID: tokenID, TokenSecret: tokenSecret})
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	pc, err := pve.New(pve.Config{Cluster: "default", URL: simSrv.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := newStack(t, openDB(t, d), pc, 1, logger)
	st.srv.V1("billing").POST("/_bench/validate", func(c *gin.Context) {
		var req provision.CreateRequest
		if err := server.BindJSON(c, &req); err != nil {
			c.AbortWithStatus(http.StatusUnprocessableEntity) // load fails on any status but 204
			return
		}
		c.Status(http.StatusNoContent)
	})
	realSrv := httptest.NewServer(st.srv)
	t.Cleanup(realSrv.Close)

	bs := newBaseline(t, d)
	baseSrv := httptest.NewServer(bs)
	t.Cleanup(baseSrv.Close)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(bare.Close)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	ids := func(side string, round int) func(i int) string {
		return func(i int) string { return fmt.Sprintf("%s-%d-%05d", side, round, i) }
	}
	create := func(url, side string) func(int) (float64, []time.Duration) {
		return func(round int) (float64, []time.Duration) {
			id := ids(side, round)
			return load(t, client, n, conc, http.StatusAccepted, func(i int) *http.Request {
				req := signedRequest(http.MethodPost, url+"/v1/services", createBody(id(i)))
				req.Header.Set("Idempotency-Key", "create-"+id(i))
				return req
			})
		}
	}
	get := func(url, side string) func(int) (float64, []time.Duration) {
		return func(round int) (float64, []time.Duration) {
			id := ids(side, round)
			return load(t, client, n, conc, http.StatusOK, func(i int) *http.Request {
				return signedRequest(http.MethodGet, url+"/v1/services/"+id(i), nil)
			})
		}
	}
	// Count the real server's SQL statements (the baseline's are fixed: 5 per create, 1 per GET).
	var stmts atomic.Int64
	countStmt := func(*gorm.DB) { stmts.Add(1) }
	dbtest.After(t, st.db, "bench:count", countStmt,
		dbtest.OnCreate, dbtest.OnQuery, dbtest.OnUpdate, dbtest.OnDelete, dbtest.OnRow, dbtest.OnRaw)
	perReq := func(f func(int) (float64, []time.Duration)) (func(int) (float64, []time.Duration), *float64) {
		out := new(float64)
		return func(round int) (float64, []time.Duration) {
			before := stmts.Load()
			tp, l := f(round)
			*out = float64(stmts.Load()-before) / float64(n)
			return tp, l
		}, out
	}
	realCreate, createStmts := perReq(create(realSrv.URL, "real"))
	rt, bt, rp, bp := pair(rounds, realCreate, create(baseSrv.URL, "base"))
	rep.info(sc, "SQL statements per create, pvebill", *createStmts, "", "baseline 5 (and one transaction)")
	rep.info(sc, "signed create, pvebill", rt, "req/s", fmt.Sprintf("p99 %.1f ms, %s, %d clients", ms(rp), d, conc))
	rep.info(sc, "signed create, baseline", bt, "req/s", fmt.Sprintf("p99 %.1f ms", ms(bp)))
	rep.target(sc, "create throughput / baseline", rt/bt, "x", ">=", 0.75, false, "")
	rep.target(sc, "create p99 / baseline", ms(rp)/ms(bp), "x", "<=", 1.3, false, "")

	realGet, getStmts := perReq(get(realSrv.URL, "real"))
	rt, bt, rp, bp = pair(rounds, realGet, get(baseSrv.URL, "base"))
	rep.info(sc, "SQL statements per GET, pvebill", *getStmts, "", "baseline 1")
	rep.info(sc, "signed GET service, pvebill", rt, "req/s", fmt.Sprintf("p99 %.1f ms", ms(rp)))
	rep.info(sc, "signed GET service, baseline", bt, "req/s", fmt.Sprintf("p99 %.1f ms", ms(bp)))
	rep.target(sc, "GET throughput / baseline", rt/bt, "x", ">=", 0.75, false, "")
	rep.target(sc, "GET p99 / baseline", ms(rp)/ms(bp), "x", "<=", 1.3, false, "")

	// A signed create body through every /v1 middleware, strictly decoded and validated by a
	// handler that stores nothing, against a bare handler. These requests take some 50 µs each:
	// longer rounds, and more of them, than for the database-bound pairs, or a garbage
	// collection or a scheduling hiccup decides the ratio.
	body := createBody("validate-only")
	nv, vrounds := n*10, scale(5, 1)
	validate := func(url string) func(int) (float64, []time.Duration) {
		return func(int) (float64, []time.Duration) {
			// Each request has its own URI: a signed POST is accepted once (R47), so a request
			// sent again within the same second would be refused as a replay.
			return load(t, client, nv, conc, http.StatusNoContent, func(int) *http.Request {
				n := strconv.FormatInt(validateSeq.Add(1), 10)
				return signedRequest(http.MethodPost, url+"/v1/_bench/validate?n="+n, body)
			})
		}
	}
	rt, bt, _, _ = pair(vrounds, validate(realSrv.URL), validate(bare.URL))
	rep.info(sc, "bare loopback handler", bt, "req/s", "")
	// What the whole /v1 stack costs against a handler that does nothing: information, not a
	// target.
	rep.info(sc, "whole /v1 stack / bare handler", rt/bt, "x",
		fmt.Sprintf("%.0f req/s: request id, access log, metrics, language, body limit, signature, scope, strict decoding, validation", rt))

	queued := dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE state = ?", models.OpQueued)
	rep.target(sc, "create operations written", float64(queued), "", "==", float64(n*(rounds+1)), true, "with the warm-up round")
}

// validateSeq numbers the validation requests of every round, so that no two are alike.
var validateSeq atomic.Int64

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// baseline is the same webhook work written with net/http and database/sql alone: the HMAC
// check, the idempotency reservation and answer, the plan read, the service and operation
// insert in one transaction, and the service read.
type baseline struct {
	db  *sql.DB
	mux *http.ServeMux
}

var (
	reServiceID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	reHostname  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

func newBaseline(t *testing.T, d string) *baseline {
	t.Helper()
	dsn := dbtest.DSN(t, d)
	driver := "mysql"
	if d == models.SQLite {
		driver = "sqlite"
		dsn += "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	} else {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "parseTime=true&loc=UTC"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	if d == models.SQLite {
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(16)
	}
	for _, q := range []string{
		`CREATE TABLE b_plans (code VARCHAR(64) PRIMARY KEY, cluster VARCHAR(64) NOT NULL, spec TEXT NOT NULL)`,
		`CREATE TABLE b_idem (client_id VARCHAR(64) NOT NULL, idem_key VARCHAR(255) NOT NULL, request_hash VARCHAR(64) NOT NULL,
			state VARCHAR(16) NOT NULL, status_code INT, body TEXT, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
			PRIMARY KEY (client_id, idem_key))`,
		`CREATE TABLE b_services (service_id VARCHAR(64) PRIMARY KEY, client_id VARCHAR(64) NOT NULL, plan VARCHAR(64) NOT NULL,
			guest_type VARCHAR(16) NOT NULL, cluster VARCHAR(64) NOT NULL, hostname VARCHAR(255) NOT NULL, state VARCHAR(32) NOT NULL,
			params_hash VARCHAR(64) NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)`,
		`CREATE TABLE b_operations (id VARCHAR(32) PRIMARY KEY, service_id VARCHAR(64) NOT NULL, client_id VARCHAR(64) NOT NULL,
			action VARCHAR(32) NOT NULL, state VARCHAR(32) NOT NULL, payload TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)`,
		`CREATE INDEX b_operations_service ON b_operations (service_id)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("baseline schema: %v", err)
		}
	}
	spec, _ := json.Marshal(benchPlans()[0])
	if _, err := db.Exec(`INSERT INTO b_plans VALUES (?, ?, ?)`, "ct-small", "default", string(spec)); err != nil {
		t.Fatal(err)
	}
	b := &baseline{db: db, mux: http.NewServeMux()}
	b.mux.HandleFunc("POST /v1/services", b.create)
	b.mux.HandleFunc("GET /v1/services/{id}", b.get)
	return b
}

func (b *baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }

func (b *baseline) fail(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"status":%d,"code":%q}`, status, code) // the client has gone if this fails
}

// verify checks the v1 signature and the timestamp window.
func (b *baseline) verify(r *http.Request, body []byte) bool {
	ts := r.Header.Get(server.HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || r.Header.Get(server.HeaderKey) != billingID {
		return false
	}
	mac := hmac.New(sha256.New, []byte(billingSecret))
	mac.Write([]byte(ts + "\n" + r.Method + "\n" + r.URL.RequestURI() + "\n"))
	mac.Write(body)
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(want), []byte(r.Header.Get(server.HeaderSignature))) != 1 {
		return false
	}
	skew := time.Since(time.Unix(sec, 0))
	return skew < 300*time.Second && skew > -300*time.Second
}

func newOpID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (b *baseline) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || !b.verify(r, body) {
		b.fail(w, http.StatusUnauthorized, "signature_invalid")
		return
	}
	var req provision.CreateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || !reServiceID.MatchString(req.ServiceID) || req.Plan == "" ||
		!reHostname.MatchString(strings.ToLower(req.Hostname)) || req.OS == "" ||
		(req.RootPassword == "" && len(req.SSHKeys) == 0) || len(req.RootPassword) > 128 {
		b.fail(w, http.StatusUnprocessableEntity, "validation_failed")
		return
	}
	ctx := r.Context()
	key := r.Header.Get("Idempotency-Key")
	sum := sha256.Sum256(append([]byte(r.Method+"\n"+r.URL.Path+"\n"), body...))
	hash := hex.EncodeToString(sum[:])
	now := time.Now()
	if key != "" {
		_, err := b.db.ExecContext(ctx, `INSERT INTO b_idem (client_id, idem_key, request_hash, state, created_at, expires_at)
			VALUES (?, ?, ?, 'pending', ?, ?)`, billingID, key, hash, now.Unix(), now.Add(24*time.Hour).Unix())
		if err != nil {
			var code sql.NullInt64
			var stored sql.NullString
			if qerr := b.db.QueryRowContext(ctx, `SELECT status_code, body FROM b_idem WHERE client_id = ? AND idem_key = ?`,
				billingID, key).Scan(&code, &stored); qerr == nil && code.Valid {
				w.Header().Set("Idempotent-Replayed", "true")
				w.WriteHeader(int(code.Int64))
				_, _ = io.WriteString(w, stored.String) // the client has gone if this fails
				return
			}
			b.fail(w, http.StatusConflict, "idempotency_in_progress")
			return
		}
	}
	var cluster, spec string
	if err := b.db.QueryRowContext(ctx, `SELECT cluster, spec FROM b_plans WHERE code = ?`, req.Plan).Scan(&cluster, &spec); err != nil {
		b.fail(w, http.StatusUnprocessableEntity, "validation_failed")
		return
	}
	payload, _ := json.Marshal(map[string]string{"plan": req.Plan, "guest_type": "container", "os": req.OS,
		"hostname": strings.ToLower(req.Hostname)})
	psum := sha256.Sum256(payload)
	opID := newOpID()
	tx, err := b.db.BeginTx(ctx, nil)
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO b_services VALUES (?, ?, ?, 'container', ?, ?, 'provisioning', ?, ?, ?)`,
			req.ServiceID, billingID, req.Plan, cluster, strings.ToLower(req.Hostname), hex.EncodeToString(psum[:]), now.Unix(), now.Unix())
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO b_operations VALUES (?, ?, ?, 'create', 'queued', ?, ?, ?)`,
				opID, req.ServiceID, billingID, string(payload), now.Unix(), now.Unix())
		}
		if err == nil {
			err = tx.Commit()
		} else {
			err = errors.Join(err, tx.Rollback())
		}
	}
	if err != nil {
		b.fail(w, http.StatusInternalServerError, "internal")
		return
	}
	out, _ := json.Marshal(map[string]any{"operation": map[string]any{"id": opID, "service_id": req.ServiceID,
		"action": "create", "state": "queued", "created_at": now.UTC(), "updated_at": now.UTC()}})
	if key != "" {
		if _, err := b.db.ExecContext(ctx, `UPDATE b_idem SET state = 'done', status_code = ?, body = ? WHERE client_id = ? AND idem_key = ?`,
			http.StatusAccepted, string(out), billingID, key); err != nil {
			b.fail(w, http.StatusInternalServerError, "internal")
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/v1/operations/"+opID)
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(out) // the client has gone if this fails
}

func (b *baseline) get(w http.ResponseWriter, r *http.Request) {
	if !b.verify(r, nil) {
		b.fail(w, http.StatusUnauthorized, "signature_invalid")
		return
	}
	var v struct {
		ServiceID string `json:"service_id"`
		ClientID  string `json:"-"`
		Plan      string `json:"plan"`
		GuestType string `json:"guest_type"`
		Cluster   string `json:"cluster"`
		Hostname  string `json:"hostname"`
		State     string `json:"state"`
		Created   int64  `json:"-"`
		Updated   int64  `json:"-"`
	}
	err := b.db.QueryRowContext(r.Context(), `SELECT service_id, client_id, plan, guest_type, cluster, hostname, state, created_at, updated_at
		FROM b_services WHERE service_id = ?`, r.PathValue("id")).Scan(&v.ServiceID, &v.ClientID, &v.Plan, &v.GuestType,
		&v.Cluster, &v.Hostname, &v.State, &v.Created, &v.Updated)
	if err != nil || v.ClientID != billingID {
		b.fail(w, http.StatusNotFound, "not_found")
		return
	}
	out, _ := json.Marshal(map[string]any{"service": map[string]any{"service_id": v.ServiceID, "plan": v.Plan,
		"guest_type": v.GuestType, "cluster": v.Cluster, "node": nil, "vmid": nil, "hostname": v.Hostname, "state": v.State,
		"power": "unknown", "ip_addresses": []string{}, "created_at": time.Unix(v.Created, 0).UTC(),
		"updated_at": time.Unix(v.Updated, 0).UTC()}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out) // the client has gone if this fails
}
