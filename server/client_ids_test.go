package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/callbacks"
)

// otherClient signs as the harness's second billing client.
func (h *svcHarness) otherClient(method, path string, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	return h.signed(method, path, "other", otherSecret, body, opts...)
}

// sameAnswer fails unless two problem answers are the same but for their request id: a probe
// must not tell another client's service from one that does not exist (R46).
func sameAnswer(t *testing.T, probe, missing response) {
	t.Helper()
	strip := func(r response) map[string]any {
		m := r.json(t)
		delete(m, "request_id")
		return m
	}
	a, b := strip(probe), strip(missing)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if probe.Status != missing.Status || probe.Header.Get("Content-Type") != missing.Header.Get("Content-Type") || string(ja) != string(jb) {
		t.Fatalf("probe answered %d %s, a missing service %d %s", probe.Status, ja, missing.Status, jb)
	}
}

// stampsCreated lists the stamp lines of the guests the simulator was asked to create.
func stampsCreated(h *svcHarness) []string {
	var out []string
	for _, r := range h.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/lxc") {
			line, _, _ := strings.Cut(r.Form.Get("description"), "\n")
			out = append(out, line)
		}
	}
	return out
}

// R46: service ids are per client. Two clients create 1042 with the same Idempotency-Key: two
// services, two guests stamped each with its client, two operations; each client reads, powers
// and is told of its own only; a probe of another client's id answers as a missing id; an
// admin addresses either with ?client= and is asked for it when the id is shared.
func TestServiceIDsArePerClient(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			key := withHeader("Idempotency-Key", "create-1042")
			mine := succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("1042", "ct-1g"), key))
			theirs := succeeded(t, h.otherClient("POST", "/v1/services?wait=20", createBody("1042", "ct-1g"), key))
			if mine["id"] == theirs["id"] || mine["service_id"] != "1042" || theirs["service_id"] != "1042" {
				t.Fatalf("operations %v and %v", mine, theirs)
			}
			stamps := stampsCreated(h)
			if len(stamps) != 2 || stamps[0] == stamps[1] ||
				!strings.Contains(strings.Join(stamps, ","), "pvebill-service: whmcs/1042") ||
				!strings.Contains(strings.Join(stamps, ","), "pvebill-service: other/1042") {
				t.Fatalf("guests created with stamps %q", stamps)
			}

			mySvc := h.service("1042")
			r := h.otherClient("GET", "/v1/services/1042", nil)
			if r.Status != 200 {
				t.Fatalf("other's GET: %d %s", r.Status, r.Body)
			}
			theirSvc := r.json(t)["service"].(map[string]any)
			if mySvc["vmid"] == theirSvc["vmid"] || mySvc["state"] != "active" || theirSvc["state"] != "active" {
				t.Fatalf("services %v and %v", mySvc, theirSvc)
			}

			// Operations: each reads its own; the other's is not found.
			checkProblem(t, h.otherClient("GET", "/v1/operations/"+mine["id"].(string), nil), 404, "not_found")
			checkProblem(t, h.billing("GET", "/v1/operations/"+theirs["id"].(string), nil), 404, "not_found")

			// A probe of an id only another client has answers exactly as an id nobody has.
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("alice-77", "ct-1g")))
			sameAnswer(t, h.otherClient("GET", "/v1/services/alice-77", nil), h.otherClient("GET", "/v1/services/nobody-77", nil))
			sameAnswer(t, h.otherClient("POST", "/v1/services/alice-77/stop", nil), h.otherClient("POST", "/v1/services/nobody-77/stop", nil))
			sameAnswer(t, h.otherClient("GET", "/v1/services/1042?client=whmcs", nil), h.otherClient("GET", "/v1/services/nobody-77", nil))

			// Usage: each client's report names its own 1042 once.
			from, to := h.clock().Add(-time.Hour).UTC().Format(time.RFC3339), h.clock().Add(time.Hour).UTC().Format(time.RFC3339)
			q := "?from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to)
			for _, c := range []struct {
				r    response
				want int
			}{{h.billing("GET", "/v1/usage"+q, nil), 2}, {h.otherClient("GET", "/v1/usage"+q, nil), 1},
				{h.otherClient("GET", "/v1/usage"+q+"&service_id=1042", nil), 1}} {
				if c.r.Status != 200 || len(c.r.json(t)["services"].([]any)) != c.want {
					t.Fatalf("usage: %d %s, want %d services", c.r.Status, c.r.Body, c.want)
				}
			}
			checkProblem(t, h.otherClient("GET", "/v1/usage"+q+"&service_id=alice-77", nil), 404, "not_found")

			// The admin reads either 1042 by its client, is asked for the client when the id is
			// shared, and reads an id one client has without naming it.
			checkProblem(t, h.admin("GET", "/v1/services/1042"), 409, "service_ambiguous")
			conformUsage(t, "/v1/services/1042", h.admin("GET", "/v1/services/1042"), 409)
			for client, svc := range map[string]map[string]any{"whmcs": mySvc, "other": theirSvc} {
				r := h.admin("GET", "/v1/services/1042?client="+client)
				conformUsage(t, "/v1/services/1042?client="+client, r, 200)
				if r.Status != 200 || r.json(t)["service"].(map[string]any)["vmid"] != svc["vmid"] {
					t.Fatalf("admin GET of %s's 1042: %d %s", client, r.Status, r.Body)
				}
			}
			if r := h.admin("GET", "/v1/services/alice-77"); r.Status != 200 {
				t.Fatalf("admin GET alice-77: %d %s", r.Status, r.Body)
			}
			checkProblem(t, h.admin("GET", "/v1/services/1042?client=nobody"), 404, "not_found")
			checkProblem(t, h.admin("GET", "/v1/services/1042?client=who%2Fm"), 422, "validation_failed")
			r = h.admin("GET", "/v1/usage"+q+"&service_id=1042")
			checkProblem(t, r, 409, "service_ambiguous")
			r = h.admin("GET", "/v1/usage"+q)
			conformUsage(t, "/v1/usage"+q, r, 200)
			owners := map[string]int{}
			for _, s := range r.json(t)["services"].([]any) {
				if m := s.(map[string]any); m["service_id"] == "1042" {
					owners[m["client_id"].(string)]++
				}
			}
			if owners["whmcs"] != 1 || owners["other"] != 1 {
				t.Fatalf("admin usage lists 1042 as %v: %s", owners, r.Body)
			}

			// The other client terminates its 1042: only its guest goes.
			succeeded(t, h.otherClient("POST", "/v1/services/1042/terminate?wait=20", nil))
			if _, ok := h.sim.Guest(int(theirSvc["vmid"].(float64))); ok {
				t.Fatal("other's guest survived its terminate")
			}
			if g, ok := h.sim.Guest(int(mySvc["vmid"].(float64))); !ok || g.Status != "running" {
				t.Fatalf("whmcs's guest after other's terminate: %+v %v", g, ok)
			}
			if s := h.service("1042"); s["state"] != "active" {
				t.Fatalf("whmcs's 1042 after other's terminate: %v", s)
			}

			// Callbacks: each client is told of its own operations only.
			received := deliverCallbacks(t, h, "whmcs", "other")
			for client, ops := range received {
				for _, op := range ops {
					if op != client {
						t.Fatalf("%s was told of an operation of %s", client, op)
					}
				}
				if len(ops) == 0 {
					t.Fatalf("%s was told of nothing", client)
				}
			}
		})
	}
}

// deliverCallbacks runs one sweep and delivery of completion callbacks to a receiver per
// client and returns, per client, the client each received event's operation belongs to.
func deliverCallbacks(t *testing.T, h *svcHarness, clients ...string) map[string][]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string][]string{}
	var targets []callbacks.Target
	for _, client := range clients {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			var ev struct {
				Operation struct {
					ID string `json:"id"`
				} `json:"operation"`
			}
			b, _ := io.ReadAll(req.Body)
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Error(err)
			}
			owner := "?"
			if op, err := h.db.GetOperation(req.Context(), ev.Operation.ID); err == nil {
				owner = op.ClientID
			}
			mu.Lock()
			got[client] = append(got[client], owner)
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(rcv.Close)
		targets = append(targets, callbacks.Target{ClientID: client, URL: rcv.URL, Secret: "callback-secret-0123456789"})
	}
	d := callbacks.New(callbacks.Options{DB: h.db, Concurrency: 1, FirstBackoff: 1, Targets: targets})
	ctx := t.Context()
	if _, err := d.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := d.DeliverDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}
