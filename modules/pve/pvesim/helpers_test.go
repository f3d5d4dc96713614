package pvesim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixedClock is a settable clock for deterministic tests.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

var testEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// harness runs a simulator behind httptest and speaks its API.
type harness struct {
	t   *testing.T
	sim *Sim
	srv *httptest.Server
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.Now == nil {
		clk := &fixedClock{t: testEpoch}
		opts.Now = clk.Now
	}
	s := New(opts)
	return startHarness(t, s)
}

func startHarness(t *testing.T, s *Sim) *harness {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &harness{t: t, sim: s, srv: srv}
}

// apiResp is a decoded Proxmox answer.
type apiResp struct {
	Status  int
	Data    json.RawMessage
	Message string
	Errors  map[string]string
	Total   *int
	Raw     []byte
}

func (h *harness) do(method, path string, form url.Values) apiResp {
	h.t.Helper()
	return h.doAuth(method, path, form, "PVEAPIToken="+h.sim.opts.TokenID+"="+h.sim.opts.TokenSecret)
}

func (h *harness) doAuth(method, path string, form url.Values, auth string) apiResp {
	h.t.Helper()
	u := h.srv.URL + apiPrefix + path
	var body io.Reader
	if form != nil && (method == http.MethodPost || method == http.MethodPut) {
		body = strings.NewReader(form.Encode())
	} else if form != nil {
		u += "?" + form.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Data    json.RawMessage   `json:"data"`
		Message string            `json:"message"`
		Errors  map[string]string `json:"errors"`
		Total   *int              `json:"total"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		h.t.Fatalf("%s %s: bad json %q: %v", method, path, raw, err)
	}
	return apiResp{Status: resp.StatusCode, Data: env.Data, Message: env.Message, Errors: env.Errors, Total: env.Total, Raw: raw}
}

// ok performs a call that must succeed and decodes data into out (if not nil).
func (h *harness) ok(method, path string, form url.Values, out any) {
	h.t.Helper()
	r := h.do(method, path, form)
	if r.Status != http.StatusOK {
		h.t.Fatalf("%s %s: status %d: %s %v", method, path, r.Status, r.Message, r.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, r.Data, err)
		}
	}
}

// fail performs a call that must fail with status and a message containing want.
func (h *harness) fail(method, path string, form url.Values, status int, want string) apiResp {
	h.t.Helper()
	r := h.do(method, path, form)
	if r.Status != status {
		h.t.Fatalf("%s %s: status %d (%s), want %d", method, path, r.Status, r.Message, status)
	}
	if want != "" && !strings.Contains(r.Message, want) {
		h.t.Fatalf("%s %s: message %q does not contain %q", method, path, r.Message, want)
	}
	return r
}

// upid runs an async call and returns its UPID.
func (h *harness) upid(method, path string, form url.Values) string {
	h.t.Helper()
	var upid string
	h.ok(method, path, form, &upid)
	if !strings.HasPrefix(upid, "UPID:") {
		h.t.Fatalf("%s %s: not a UPID: %q", method, path, upid)
	}
	return upid
}

// wait reads the task status of a UPID (on the node named in it) and returns it.
func (h *harness) taskStatus(upid string) map[string]any {
	h.t.Helper()
	node := strings.Split(upid, ":")[1]
	var st map[string]any
	h.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil, &st)
	return st
}

// run performs an async call and requires its task to end with exit status want.
func (h *harness) run(method, path string, form url.Values, want string) string {
	h.t.Helper()
	upid := h.upid(method, path, form)
	st := h.taskStatus(upid)
	if st["status"] != "stopped" {
		h.t.Fatalf("%s %s: task still %v", method, path, st["status"])
	}
	if st["exitstatus"] != want {
		h.t.Fatalf("%s %s: exitstatus %q, want %q (log %q)", method, path, st["exitstatus"], want, h.sim.TaskLog(upid))
	}
	return upid
}

func (h *harness) noViolations() {
	h.t.Helper()
	for _, v := range h.sim.SchemaViolations() {
		h.t.Errorf("schema violation: %s", v)
	}
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func demoHarness(t *testing.T) *harness {
	t.Helper()
	clk := &fixedClock{t: testEpoch}
	return startHarness(t, Demo(Options{Now: clk.Now}))
}

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}
