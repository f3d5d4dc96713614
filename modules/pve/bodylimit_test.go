package pve

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// countingBody counts the bytes the client reads of an answer.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countingTransport wraps every answer's body in a countingBody.
type countingTransport struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{ReadCloser: resp.Body, n: t.n}
	}
	return resp, err
}

// endless streams a 200 answer that never ends: an opening that parses, then spaces.
type endless struct{ written atomic.Int64 }

func (e *endless) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	chunk := []byte(`{"data":[` + strings.Repeat(" ", 32<<10-9))
	for r.Context().Err() == nil {
		n, err := w.Write(chunk)
		e.written.Add(int64(n))
		if err != nil {
			return
		}
		chunk = []byte(strings.Repeat(" ", 32<<10))
	}
}

// R50: an answer longer than its endpoint's limit fails with ErrTooLarge, is not retried, and
// no more than the limit (plus the one byte that tells it is longer) is read of it, for a small
// answer (a node's status) and a listing (/cluster/resources).
func TestBodyOverLimit(t *testing.T) {
	for _, tc := range []struct {
		path  string
		limit int64
	}{{"/nodes/pve1/status", smallBodyBytes}, {"/cluster/resources", listingBodyBytes}} {
		t.Run(tc.path, func(t *testing.T) {
			srv := httptest.NewServer(&endless{})
			defer srv.Close()
			c := newTestClient(t, testConfig(srv.URL), nil)
			var read atomic.Int64
			c.http.Transport = countingTransport{base: c.http.Transport, n: &read}
			var out []map[string]any
			err := c.DoRequest(t.Context(), http.MethodGet, tc.path, nil, &out)
			var apiErr *APIError
			if !errors.Is(err, ErrTooLarge) || !errors.As(err, &apiErr) || apiErr.Attempts != 1 {
				t.Fatalf("err %v, want ErrTooLarge after one attempt", err)
			}
			if got := read.Load(); got > tc.limit+1 || got < tc.limit {
				t.Fatalf("read %d bytes, want %d to %d", got, tc.limit, tc.limit+1)
			}
			if out != nil {
				t.Fatalf("parsed %v", out)
			}
		})
	}
}

// An answer of exactly its limit is read whole and parsed.
func TestBodyAtLimit(t *testing.T) {
	body := `{"data":"` + strings.Repeat("x", smallBodyBytes-len(`{"data":""}`)) + `"}`
	srv := httptest.NewServer(&replay{status: []int{200}, body: []string{body}})
	defer srv.Close()
	c := newTestClient(t, testConfig(srv.URL), nil)
	var out string
	if err := c.DoRequest(t.Context(), http.MethodGet, "/nodes/pve1/status", nil, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != smallBodyBytes-len(`{"data":""}`) {
		t.Fatalf("read %d bytes of data", len(out))
	}
}

// Each endpoint gets the limit its answers need: listings that scale with guests the large one.
func TestBodyLimits(t *testing.T) {
	for path, want := range map[string]int64{
		"/cluster/resources":                listingBodyBytes,
		"/nodes/pve1/lxc":                   listingBodyBytes,
		"/nodes/pve1/qemu":                  listingBodyBytes,
		"/nodes/pve1/storage/local/content": listingBodyBytes,
		"/nodes/pve1/tasks/UPID:pve1:1:2:3:vzcreate:5001:root@pam:/log":    taskLogBodyBytes,
		"/nodes/pve1/tasks/UPID:pve1:1:2:3:vzcreate:5001:root@pam:/status": smallBodyBytes,
		"/nodes/pve1/lxc/5001/config":                                      smallBodyBytes,
		"/nodes/pve1/qemu/5001/status/current":                             smallBodyBytes,
		"/cluster/firewall/options":                                        smallBodyBytes,
		"/version":                                                         smallBodyBytes,
	} {
		if got := bodyLimit(path); got != want {
			t.Errorf("bodyLimit(%s) = %d, want %d", path, got, want)
		}
	}
}
