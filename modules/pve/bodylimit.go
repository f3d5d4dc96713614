package pve

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Response bodies are read up to a limit that fits the endpoint, so an upstream that answers
// without end (or a hostile one) costs at most that much memory per request, and an answer over
// its limit is an error of kind [ErrTooLarge] rather than a truncated parse (R50).
//
// The figures: a guest's row in /cluster/resources is at most about 650 bytes of JSON (a long
// name, tags, pool, HA state, lock and PVE 9's six pressure figures), so 50,000 guests answer
// about 31 MiB; the node indexes (/nodes/{node}/lxc, /nodes/{node}/qemu) carry about 400 bytes
// a guest and a storage's content about 500 bytes a volume. Listings get 48 MiB: 50,000 guests
// with half as much again to spare. A task log is read in pages of limit lines: 4 MiB. Every
// other answer (status, config, options, a task's status, a UPID) is a few KiB: 2 MiB.
const (
	listingBodyBytes = 48 << 20
	taskLogBodyBytes = 4 << 20
	smallBodyBytes   = 2 << 20
)

// bodyLimit is the most bytes read of the answer to path (relative to /api2/json).
func bodyLimit(path string) int64 {
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case path == "/cluster/resources":
		return listingBodyBytes
	case len(seg) == 3 && seg[0] == "nodes" && (seg[2] == "lxc" || seg[2] == "qemu"):
		return listingBodyBytes
	case len(seg) == 5 && seg[0] == "nodes" && seg[2] == "storage" && seg[4] == "content":
		return listingBodyBytes
	case len(seg) == 5 && seg[0] == "nodes" && seg[2] == "tasks" && seg[4] == "log":
		return taskLogBodyBytes
	}
	return smallBodyBytes
}

// readBody reads at most limit bytes of body, and one more to tell an answer of exactly limit
// bytes from a longer one; over is true when the answer is longer (nothing past limit+1 bytes is
// read).
func readBody(body io.Reader, limit int64) (raw []byte, over bool, err error) {
	raw, err = io.ReadAll(io.LimitReader(body, limit+1))
	if int64(len(raw)) > limit {
		return nil, true, err
	}
	return raw, false, err
}

// tooLarge is the failure of an answer over its limit. It is not retried: the same request
// would get the same answer. A write answered this way may have been carried out.
func (c *Client) tooLarge(method, path string, status int, limit int64) *attemptError {
	return c.fail(method, path, status, fmt.Sprintf("response body over %d bytes", limit), nil, ErrTooLarge,
		false, method != http.MethodGet)
}
