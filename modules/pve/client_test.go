package pve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testTokenID = "svc@pve!provision"
	testSecret  = "5a1d0c6e-7f42-4b1e-9c3d-2b8e6f0a1c44"
)

// testConfig is a config with fast retries and task polling.
func testConfig(u string) Config {
	return Config{
		Cluster:             "test",
		URL:                 u,
		TokenID:             testTokenID,
		TokenSecret:         testSecret,
		Timeout:             5 * time.Second,
		RetryBaseDelay:      time.Millisecond,
		RetryMaxDelay:       4 * time.Millisecond,
		TaskPollInterval:    time.Millisecond,
		TaskPollMaxInterval: 20 * time.Millisecond,
	}
}

func newTestClient(t *testing.T, cfg Config, m *Metrics) *Client {
	t.Helper()
	c, err := New(cfg, m)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// replay answers every request with a fixed Proxmox answer and counts calls.
type replay struct {
	mu     sync.Mutex
	calls  int
	status []int // status of call i; the last one repeats
	body   []string
	reason string // custom reason phrase (written over a hijacked connection)
	last   *http.Request
	form   url.Values
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_ = req.ParseForm()
	r.mu.Lock()
	i := min(r.calls, len(r.status)-1)
	r.calls++
	r.last = req
	r.form = req.PostForm
	status, body, reason := r.status[i], r.body[min(i, len(r.body)-1)], r.reason
	r.mu.Unlock()
	if reason != "" {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			status, reason, len(body), body)
		_ = buf.Flush()
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func (r *replay) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func pveError(msg string) string {
	return fmt.Sprintf(`{"data":null,"message":%q}`, msg+"\n")
}

var allKinds = []error{
	ErrNotFound, ErrAlreadyExists, ErrLocked, ErrPermission, ErrAuth, ErrInvalidParam,
	ErrNotImplemented, ErrTransient, ErrConflict, ErrAlreadyRunning, ErrNotRunning,
	ErrProtected, ErrServer, ErrUnexpected, ErrTooLarge, ErrTLS, ErrAgentNotRunning,
}

// TestErrorKinds replays error answers with Proxmox's own texts (see
// docs/proxmox.md and the Perl sources it cites) and checks
// each is sorted into exactly the expected kinds.
func TestErrorKinds(t *testing.T) {
	param := func(k, v string) string {
		return fmt.Sprintf(`{"data":null,"message":"Parameter verification failed.\n","errors":{%q:%q}}`, k, v+"\n")
	}
	cases := []struct {
		name   string
		method string
		status int
		body   string
		reason string
		kinds  []error // every kind errors.Is must match; all others must not
	}{
		{"lxc config missing", "GET", 500, pveError("Configuration file 'nodes/pve1/lxc/5001.conf' does not exist"), "", []error{ErrNotFound}},
		{"qemu config missing", "GET", 500, pveError("Configuration file 'nodes/pve1/qemu-server/105.conf' does not exist"), "", []error{ErrNotFound}},
		{"no such VM", "GET", 500, pveError("no such VM ('5001')"), "", []error{ErrNotFound}},
		{"clone source missing", "POST", 500, pveError("unable to find configuration file for VM 9001 on node 'pve1'"), "", []error{ErrNotFound}},
		{"qemu check_running on missing VM", "POST", 500, pveError("unable to find configuration file for VM 5001 - no such machine"), "", []error{ErrNotFound}},
		{"reason phrase only", "GET", 500, `{"data":null}`, "no such VM ('999')", []error{ErrNotFound}},
		{"task on the wrong node", "GET", 400, param("upid", "no such task"), "", []error{ErrNotFound, ErrInvalidParam}},

		{"ct exists", "POST", 500, pveError("CT 5001 already exists on node 'pve1'"), "", []error{ErrAlreadyExists}},
		{"vm exists", "POST", 500, pveError("VM 5001 already exists on node 'pve2'"), "", []error{ErrAlreadyExists}},
		{"create wraps exists", "POST", 500, pveError("unable to create VM 9100 - VM 9100 already exists on node 'pve12t'"), "", []error{ErrAlreadyExists}},
		{"nextid taken", "GET", 400, param("vmid", "VM 5001 already exists"), "", []error{ErrAlreadyExists, ErrInvalidParam}},

		{"ct locked backup", "POST", 500, pveError("CT is locked (backup)"), "", []error{ErrLocked}},
		{"vm locked clone", "PUT", 500, pveError("VM is locked (clone)"), "", []error{ErrLocked}},
		{"ct locked create", "DELETE", 500, pveError("CT is locked (create)"), "", []error{ErrLocked}},
		{"config lock timeout", "PUT", 500, pveError("can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"), "", []error{ErrLocked}},

		{"digest mismatch", "PUT", 500, pveError("detected modified configuration - file changed by other user? Try again."), "", []error{ErrConflict}},

		{"ct already running", "POST", 500, pveError("CT 5001 already running"), "", []error{ErrAlreadyRunning}},
		{"vm already running", "POST", 500, pveError("VM 100 already running"), "", []error{ErrAlreadyRunning}},
		{"ct not running", "POST", 500, pveError("CT 5001 not running"), "", []error{ErrNotRunning}},
		{"vm not running", "POST", 500, pveError("VM 100 not running"), "", []error{ErrNotRunning}},
		{"vm is not running (agent)", "POST", 500, pveError("VM 100 is not running"), "", []error{ErrNotRunning}},
		{"agent not running", "POST", 500, pveError("QEMU guest agent is not running"), "", []error{ErrAgentNotRunning}},
		{"agent not configured", "POST", 500, pveError("No QEMU guest agent configured"), "", []error{ErrAgentNotRunning}},

		{"ct protected", "DELETE", 500, pveError("can't remove CT 5001 - protection mode enabled"), "", []error{ErrProtected}},
		{"vm protected", "DELETE", 500, pveError("can't remove VM 100 - protection mode enabled"), "", []error{ErrProtected}},

		{"permission", "POST", 403, pveError("Permission check failed (/vms/5001, VM.Allocate)"), "", []error{ErrPermission}},
		{"token restriction", "POST", 403, pveError("Permission check failed (mount point type bind is only allowed for root@pam)"), "", []error{ErrPermission}},
		{"auth", "GET", 401, "", "authentication failure", []error{ErrAuth}},
		{"bad param", "POST", 400, param("memory", "value must have a minimum value of 16"), "", []error{ErrInvalidParam}},
		{"unknown path", "GET", 501, pveError("Method 'GET /nodes/pve1/lxc/5001/foo' not implemented"), "", []error{ErrNotImplemented}},
		{"404 from a proxy", "GET", 404, "<html>not found</html>", "", []error{ErrNotImplemented}},

		{"no free id", "GET", 500, pveError("unable to get any free VMID in range [100, 1000000]"), "", []error{ErrServer}},
		{"storage missing is not a guest missing", "GET", 500, pveError("storage 'nosuch' does not exist"), "", []error{ErrServer}},
		{"agent not running is not the guest", "GET", 500, pveError("QEMU guest agent is not running"), "", []error{ErrAgentNotRunning}},
		{"lxc resize same size", "PUT", 500, pveError("disk is already at specified size"), "", []error{ErrServer}},

		{"bad gateway", "GET", 502, "", "", []error{ErrTransient}},
		{"unavailable", "POST", 503, "", "", []error{ErrTransient}},
		{"gateway timeout on GET", "GET", 504, "", "", []error{ErrTransient}},
		{"gateway timeout on POST", "POST", 504, "", "", []error{ErrTransient, ErrMaybeApplied}},
		{"node unreachable", "POST", 595, "", "Connection refused", []error{ErrTransient}},
		{"hop timeout on GET", "GET", 596, "", "Connection timed out", []error{ErrTransient}},
		{"hop timeout on PUT", "PUT", 596, "", "Connection timed out", []error{ErrTransient, ErrMaybeApplied}},
		{"odd status", "GET", 418, "", "", []error{ErrUnexpected}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp := &replay{status: []int{tc.status}, body: []string{tc.body}, reason: tc.reason}
			srv := httptest.NewServer(rp)
			defer srv.Close()
			cfg := testConfig(srv.URL)
			cfg.MaxRetries = -1
			c := newTestClient(t, cfg, nil)
			err := c.DoRequest(t.Context(), tc.method, routeFor(tc.method), nil, nil)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if apiErr.Status != tc.status {
				t.Errorf("status %d, want %d", apiErr.Status, tc.status)
			}
			want := map[error]bool{}
			for _, k := range tc.kinds {
				want[k] = true
			}
			for _, k := range append(allKinds, ErrMaybeApplied) {
				if got := errors.Is(err, k); got != want[k] {
					t.Errorf("errors.Is(%v) = %t, want %t (error: %v)", k, got, want[k], err)
				}
			}
			if apiErr.Message == "" && tc.status != 502 && tc.status != 503 && tc.status != 504 && tc.status != 418 {
				t.Errorf("empty message")
			}
			if strings.HasSuffix(apiErr.Message, "\n") {
				t.Errorf("message keeps its newline: %q", apiErr.Message)
			}
		})
	}
}

func TestAPIErrorString(t *testing.T) {
	e := &APIError{Method: "GET", Path: "/cluster/nextid", Status: 400, Message: "Parameter verification failed.",
		Errors: map[string]string{"vmid": "VM 5001 already exists", "a": "b"}, Kind: ErrAlreadyExists}
	want := "pve: GET /cluster/nextid: 400 Parameter verification failed. (a: b, vmid: VM 5001 already exists)"
	if e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	n := &APIError{Method: "POST", Path: "/x", Message: "connection reset", Kind: ErrTransient, MaybeApplied: true}
	if want := "pve: POST /x: network error connection reset [may have been applied]"; n.Error() != want {
		t.Errorf("got %q, want %q", n.Error(), want)
	}
}

func TestRequestShape(t *testing.T) {
	rp := &replay{status: []int{200}, body: []string{`{"data":"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzstart:5001:svc@pve!provision:"}`}}
	srv := httptest.NewServer(rp)
	defer srv.Close()
	c := newTestClient(t, testConfig(srv.URL+"/api2/json/"), nil)

	params := url.Values{"timeout": {"30"}, "forceStop": {"1"}}
	var upid string
	if err := c.DoRequest(t.Context(), http.MethodPost, "/nodes/pve1/lxc/5001/status/shutdown", params, &upid); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(upid, "UPID:pve1:") {
		t.Errorf("upid %q", upid)
	}
	req := rp.last
	if req.URL.Path != "/api2/json/nodes/pve1/lxc/5001/status/shutdown" {
		t.Errorf("path %q", req.URL.Path)
	}
	if got := req.Header.Get("Authorization"); got != "PVEAPIToken="+testTokenID+"="+testSecret {
		t.Errorf("authorization %q", got)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("content type %q", ct)
	}
	if req.URL.RawQuery != "" {
		t.Errorf("POST carries a query: %q", req.URL.RawQuery)
	}
	if rp.form.Get("timeout") != "30" || rp.form.Get("forceStop") != "1" {
		t.Errorf("form %v", rp.form)
	}
	if len(req.Cookies()) != 0 {
		t.Errorf("cookies sent: %v", req.Cookies())
	}

	// GET and DELETE carry their parameters in the query.
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if err := c.DoRequest(t.Context(), m, routeFor(m), url.Values{"purge": {"1"}}, nil); err != nil {
			t.Fatal(err)
		}
		if rp.last.Method != m || rp.last.URL.Query().Get("purge") != "1" || rp.last.Header.Get("Content-Type") != "" {
			t.Errorf("%s: query %q content type %q", m, rp.last.URL.RawQuery, rp.last.Header.Get("Content-Type"))
		}
	}
}

func TestRequestRejectsBadInput(t *testing.T) {
	c := newTestClient(t, testConfig("http://127.0.0.1:1"), nil)
	if err := c.DoRequest(t.Context(), "PATCH", "/x", nil, nil); err == nil {
		t.Error("PATCH accepted")
	}
	if err := c.DoRequest(t.Context(), "GET", "x", nil, nil); err == nil {
		t.Error("relative path accepted")
	}
}

func TestDecodeFailureIsUnexpected(t *testing.T) {
	rp := &replay{status: []int{200}, body: []string{`<html>`, `{"data":{"vmid":"x"}}`}}
	srv := httptest.NewServer(rp)
	defer srv.Close()
	c := newTestClient(t, testConfig(srv.URL), nil)
	var out struct{ VMID Int }
	err := c.DoRequest(t.Context(), "GET", "/cluster/nextid", nil, &out)
	if !errors.Is(err, ErrUnexpected) {
		t.Errorf("non-JSON body: %v", err)
	}
	err = c.DoRequest(t.Context(), "GET", "/cluster/nextid", nil, &out)
	if !errors.Is(err, ErrUnexpected) {
		t.Errorf("undecodable data: %v", err)
	}
	if rp.count() != 2 {
		t.Errorf("%d requests, want 2 (no retry of a decode failure)", rp.count())
	}
	if errors.Is(err, ErrMaybeApplied) {
		t.Errorf("a GET marked as maybe applied: %v", err)
	}

	// A write answered with something other than a UPID was still carried
	// out (vzdump answers "OK" when it has nothing to do on the node).
	ok := httptest.NewServer(&replay{status: []int{200}, body: []string{`{"data":"OK"}`}})
	defer ok.Close()
	c = newTestClient(t, testConfig(ok.URL), nil)
	_, err = c.startTask(t.Context(), http.MethodPost, "/nodes/pve1/vzdump", nil)
	if !errors.Is(err, ErrUnexpected) || !errors.Is(err, ErrMaybeApplied) {
		t.Errorf("non-UPID answer: %v", err)
	}
}

// TestRetryCounts checks which failures are retried by counting requests.
func TestRetryCounts(t *testing.T) {
	ok := `{"data":"ok"}`
	cases := []struct {
		name   string
		method string
		status []int
		body   []string
		calls  int
		kinds  []error
	}{
		{"one 503 then success", "POST", []int{503, 200}, []string{"", ok}, 2, nil},
		{"one 502 then success", "GET", []int{502, 200}, []string{"", ok}, 2, nil},
		{"595 then success on POST", "POST", []int{595, 200}, []string{"", ok}, 2, nil},
		{"596 retried on GET", "GET", []int{596, 200}, []string{"", ok}, 2, nil},
		{"503 forever: bounded", "GET", []int{503}, []string{""}, 4, []error{ErrTransient}},
		{"400 never retried", "POST", []int{400, 200}, []string{`{"data":null,"errors":{"memory":"too small"}}`, ok}, 1, []error{ErrInvalidParam}},
		{"500 already exists never retried", "POST", []int{500, 200}, []string{pveError("CT 5001 already exists on node 'pve1'"), ok}, 1, []error{ErrAlreadyExists}},
		{"500 locked left to the caller", "POST", []int{500, 200}, []string{pveError("CT is locked (backup)"), ok}, 1, []error{ErrLocked}},
		{"401 never retried", "GET", []int{401, 200}, []string{"", ok}, 1, []error{ErrAuth}},
		{"596 on POST not retried", "POST", []int{596, 200}, []string{"", ok}, 1, []error{ErrTransient, ErrMaybeApplied}},
		{"504 on PUT not retried", "PUT", []int{504, 200}, []string{"", ok}, 1, []error{ErrTransient, ErrMaybeApplied}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp := &replay{status: tc.status, body: tc.body}
			srv := httptest.NewServer(rp)
			defer srv.Close()
			c := newTestClient(t, testConfig(srv.URL), nil)
			err := c.DoRequest(t.Context(), tc.method, routeFor(tc.method), nil, nil)
			if got := rp.count(); got != tc.calls {
				t.Errorf("%d requests, want %d", got, tc.calls)
			}
			if len(tc.kinds) == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			for _, k := range tc.kinds {
				if !errors.Is(err, k) {
					t.Errorf("error %v is not %v", err, k)
				}
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && apiErr.Attempts != tc.calls {
				t.Errorf("Attempts = %d, want %d", apiErr.Attempts, tc.calls)
			}
		})
	}
}

// dropServer accepts connections, reads the request head and hangs up
// without answering.
func dropServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer conn.Close()
				_, _ = http.ReadRequest(bufio.NewReader(conn))
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return "http://" + ln.Addr().String(), &n
}

func TestNetworkFailures(t *testing.T) {
	t.Run("dropped POST may have been applied and is not retried", func(t *testing.T) {
		u, n := dropServer(t)
		c := newTestClient(t, testConfig(u), nil)
		err := c.DoRequest(t.Context(), http.MethodPost, "/nodes/pve1/lxc", url.Values{"vmid": {"5001"}}, nil)
		if !errors.Is(err, ErrTransient) || !errors.Is(err, ErrMaybeApplied) {
			t.Errorf("error %v: want transient and maybe-applied", err)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%d connections, want 1", got)
		}
	})
	t.Run("dropped GET is retried", func(t *testing.T) {
		u, n := dropServer(t)
		c := newTestClient(t, testConfig(u), nil)
		err := c.DoRequest(t.Context(), http.MethodGet, "/cluster/resources", nil, nil)
		if !errors.Is(err, ErrTransient) || errors.Is(err, ErrMaybeApplied) {
			t.Errorf("error %v: want transient only", err)
		}
		if got := n.Load(); got != 1+DefaultMaxRetries {
			t.Errorf("%d connections, want %d", got, 1+DefaultMaxRetries)
		}
	})
	t.Run("refused POST was never sent and is retried", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		c := newTestClient(t, testConfig("http://"+addr), nil)
		err = c.DoRequest(t.Context(), http.MethodPost, "/nodes/pve1/lxc", nil, nil)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || !errors.Is(err, ErrTransient) || errors.Is(err, ErrMaybeApplied) {
			t.Fatalf("error %v: want transient, not maybe-applied", err)
		}
		if apiErr.Attempts != 1+DefaultMaxRetries || apiErr.Status != 0 {
			t.Errorf("attempts %d status %d", apiErr.Attempts, apiErr.Status)
		}
	})
}

func TestBackoff(t *testing.T) {
	c := newTestClient(t, Config{URL: "https://pve.example:8006", TokenID: testTokenID, TokenSecret: testSecret,
		RetryBaseDelay: 100 * time.Millisecond, RetryMaxDelay: time.Second}, nil)
	bounds := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 200 * time.Millisecond, 400 * time.Millisecond},
		{4, 400 * time.Millisecond, 800 * time.Millisecond},
		{5, 500 * time.Millisecond, time.Second},
		{40, 500 * time.Millisecond, time.Second},
	}
	for _, b := range bounds {
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d := c.backoff(b.attempt)
			if d < b.min || d > b.max {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", b.attempt, d, b.min, b.max)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("backoff(%d) has no jitter", b.attempt)
		}
	}
}

func TestRetryWaitHonoursContext(t *testing.T) {
	rp := &replay{status: []int{503}, body: []string{""}}
	srv := httptest.NewServer(rp)
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.RetryBaseDelay, cfg.RetryMaxDelay = time.Hour, time.Hour
	c := newTestClient(t, cfg, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.DoRequest(ctx, http.MethodGet, "/cluster/resources", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTransient) {
		t.Errorf("error %v: want deadline exceeded and transient", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("wait ignored the context")
	}
	if rp.count() != 1 {
		t.Errorf("%d requests, want 1", rp.count())
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		_, _ = io.WriteString(w, `{"data":[]}`)
	}))
	defer srv.Close()
	cfg := testConfig(srv.URL)
	cfg.Timeout = 50 * time.Millisecond
	c := newTestClient(t, cfg, nil)
	if err := c.DoRequest(t.Context(), http.MethodGet, "/nodes", nil, nil); err != nil {
		t.Fatalf("GET after one timed-out attempt: %v", err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d requests, want 2", calls.Load())
	}
}

func fingerprintOf(raw []byte) string {
	return formatFingerprint(sha256.Sum256(raw))
}

func TestTLS(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, `{"data":"100"}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	defer srv.Close()
	pin := fingerprintOf(srv.Certificate().Raw)
	wrong := fingerprintOf([]byte("another certificate"))

	cases := []struct {
		name     string
		pin      string
		insecure bool
		ok       bool
	}{
		{"correct pin", pin, false, true},
		{"correct pin in lower case", strings.ToLower(pin), false, true},
		{"second of two pins (rotation)", wrong + ", " + pin, false, true},
		{"wrong pin refused", wrong, false, false},
		{"wrong pin refused even when insecure is set", wrong, true, false},
		{"self-signed without pin refused", "", false, false},
		{"insecure accepted", "", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			cfg := testConfig(srv.URL)
			cfg.Fingerprint, cfg.InsecureSkipVerify = tc.pin, tc.insecure
			c := newTestClient(t, cfg, nil)
			var id Int
			err := c.DoRequest(t.Context(), http.MethodGet, "/cluster/nextid", nil, &id)
			if tc.ok {
				if err != nil || id != 100 {
					t.Fatalf("got %d, %v", id, err)
				}
				return
			}
			if !errors.Is(err, ErrTLS) || errors.Is(err, ErrTransient) {
				t.Fatalf("error %v: want ErrTLS only", err)
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) && apiErr.Attempts != 1 {
				t.Errorf("TLS failure retried: %d attempts", apiErr.Attempts)
			}
			if hits.Load() != 0 {
				t.Errorf("request reached the server")
			}
			if tc.pin == wrong && !strings.Contains(err.Error(), pin) {
				t.Errorf("error does not name the presented fingerprint: %v", err)
			}
		})
	}
}

func TestConfigValidation(t *testing.T) {
	good := Config{URL: "https://pve1.example.net:8006", TokenID: testTokenID, TokenSecret: testSecret}
	if _, err := New(good, nil); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	bad := map[string]func(*Config){
		"no URL":             func(c *Config) { c.URL = "" },
		"ftp URL":            func(c *Config) { c.URL = "ftp://pve" },
		"URL without host":   func(c *Config) { c.URL = "https:///api2/json" },
		"URL with user":      func(c *Config) { c.URL = "https://root:pw@pve:8006" },
		"token without !":    func(c *Config) { c.TokenID = "svc@pve" },
		"token without user": func(c *Config) { c.TokenID = "!provision" },
		"token with =":       func(c *Config) { c.TokenID = "svc@pve!a=b" },
		"no secret":          func(c *Config) { c.TokenSecret = "" },
		"secret with CRLF":   func(c *Config) { c.TokenSecret = "x\r\nX-Evil: 1" },
		"short fingerprint":  func(c *Config) { c.Fingerprint = "AA:BB" },
		"fingerprint no :":   func(c *Config) { c.Fingerprint = strings.Repeat("AB", 32) },
		"fingerprint junk":   func(c *Config) { c.Fingerprint = strings.Repeat("ZZ:", 31) + "ZZ" },
		"negative timeout":   func(c *Config) { c.Timeout = -time.Second },
		"poll factor < 1":    func(c *Config) { c.TaskPollFactor = 0.5 },
	}
	for name, mutate := range bad {
		cfg := good
		mutate(&cfg)
		_, err := New(cfg, nil)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: error leaks the secret: %v", name, err)
		}
	}

	c := newTestClient(t, Config{URL: "https://pve:8006/api2/json/", TokenID: testTokenID, TokenSecret: testSecret}, nil)
	if c.base.String() != "https://pve:8006" {
		t.Errorf("base %q", c.base.String())
	}
	if c.maxRetries != DefaultMaxRetries || c.timeout != DefaultTimeout || c.pollInterval != DefaultTaskPollInterval ||
		c.pollMax != DefaultTaskPollMaxInterval || c.pollFactor != DefaultTaskPollFactor {
		t.Errorf("defaults not applied: %+v", c)
	}
	c = newTestClient(t, Config{URL: "https://pve:8006", TokenID: testTokenID, TokenSecret: testSecret, MaxRetries: -1}, nil)
	if c.maxRetries != 0 {
		t.Errorf("negative MaxRetries gives %d retries", c.maxRetries)
	}
}

// routeFor is a call of the route table (routes.go) with the given method, for the tests of the
// transport itself: the client sends nothing the table does not hold.
func routeFor(method string) string {
	switch method {
	case http.MethodPost:
		return "/nodes/pve1/qemu/5001/config"
	case http.MethodDelete:
		return "/nodes/pve1/lxc/5001"
	}
	return "/nodes/pve1/lxc/5001/config"
}
