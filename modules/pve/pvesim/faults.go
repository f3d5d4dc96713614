package pvesim

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Injected faults: how a request is matched to a fault, and how a fault answers.

// faultSet is the injected faults in the order they were added; hangCh is closed (and
// replaced) when they are cleared, releasing hanging requests.
type faultSet struct {
	faultMu  sync.Mutex
	faults   []*injectedFault
	faultSeq int
	hangCh   chan struct{}
}

// Fault is an injected failure. A fault matches requests by Method ("" = any) and
// PathPattern: a schema template ("/nodes/{node}/lxc"), a concrete path, or a regular
// expression matched against the path relative to /api2/json. A fault that answers by
// itself (Status without After, DropConn, Hang) does so before authentication and the
// schema checks, so such a request is never recorded as a schema violation.
type Fault struct {
	Method      string `json:"method"`
	PathPattern string `json:"path_pattern"`
	// Nth is the 1-based number of the matching request that triggers the fault; 0 means
	// every matching request.
	Nth int `json:"nth"`
	// Times limits how often the fault fires (0: once when Nth > 0, unlimited otherwise).
	Times int `json:"times"`

	Status  int    `json:"status"`  // answer with this HTTP status
	Message string `json:"message"` // error message for Status (Proxmox envelope)
	Body    string `json:"body"`    // raw body for Status, overriding Message
	// After applies the request first and only then answers with Status or drops the
	// connection: the work is done although the client sees a failure (like a 596).
	After    bool          `json:"after"`
	DropConn bool          `json:"drop_conn"`
	Hang     bool          `json:"hang"` // never answer (until the client gives up or faults are cleared)
	Delay    time.Duration `json:"delay"`
	// TaskFail makes the task started by the matched call fail with this exit status.
	TaskFail string `json:"task_fail"`
	// UnpackFail makes the restore task started by the matched call fail with this message
	// after it destroyed the overwritten guest's volumes and before it unpacks the archive:
	// the old guest is gone and no new one is made (docs/proxmox.md §9.3).
	UnpackFail string `json:"unpack_fail"`
	// TaskWarnings makes the task started by the matched call end with "WARNINGS: n".
	TaskWarnings int `json:"task_warnings"`
}

// injectedFault is a Fault with its compiled path pattern and how often it matched and
// fired.
type injectedFault struct {
	id    int
	f     Fault
	re    *regexp.Regexp
	seen  int
	fired int
}

// InjectFault adds a fault and returns its id.
func (s *Sim) InjectFault(f Fault) int {
	fs := &injectedFault{f: f}
	if f.PathPattern != "" && !strings.Contains(f.PathPattern, "{") {
		if re, err := regexp.Compile("^(?:" + f.PathPattern + ")$"); err == nil {
			fs.re = re
		}
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faultSeq++
	fs.id = s.faultSeq
	s.faults = append(s.faults, fs)
	return fs.id
}

// FaultFired is how often the fault with id has fired so far (0 for an unknown id): a test
// waits on it to act while a delayed or hanging request is inside the simulator.
func (s *Sim) FaultFired(id int) int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for _, fs := range s.faults {
		if fs.id == id {
			return fs.fired
		}
	}
	return 0
}

// ClearFaults removes all faults and releases hanging requests.
func (s *Sim) ClearFaults() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = nil
	close(s.hangCh)
	s.hangCh = make(chan struct{})
}

// matchFault finds the first fault that fires for this request.
func (s *Sim) matchFault(method, rel, template string) (*Fault, chan struct{}) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for _, fs := range s.faults {
		if fs.f.Method != "" && !strings.EqualFold(fs.f.Method, method) {
			continue
		}
		if p := fs.f.PathPattern; p != "" {
			trimmed := strings.TrimPrefix(p, apiPrefix)
			match := trimmed == template || trimmed == rel || strings.TrimRight(trimmed, "/") == strings.TrimRight(rel, "/")
			if !match && fs.re != nil {
				match = fs.re.MatchString(rel)
			}
			if !match {
				continue
			}
		}
		fs.seen++
		nth := fs.f.Nth
		times := fs.f.Times
		if nth <= 0 {
			nth = 1
			if fs.f.Nth == 0 && times == 0 {
				times = -1
			}
		} else if times == 0 {
			times = 1
		}
		if fs.seen < nth {
			continue
		}
		if times >= 0 && fs.fired >= times {
			continue
		}
		fs.fired++
		f := fs.f
		return &f, s.hangCh
	}
	return nil, nil
}

func dropConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close() // dropping the connection is the point
}

func writeFault(w http.ResponseWriter, f *Fault) {
	if f.Body != "" {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, f.Body)
		return
	}
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
		if msg == "" {
			msg = "injected fault"
		}
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	writeJSON(w, f.Status, map[string]any{"data": nil, "message": msg})
}

// faultBefore applies a fault's delay, and answers for it before the request is handled
// when the fault hangs, or drops the connection or answers a status without After. It
// reports whether it answered.
func (s *Sim) faultBefore(w http.ResponseWriter, r *http.Request, f *Fault, hang chan struct{}, entry Request) bool {
	if f.Delay > 0 {
		wait(r, f.Delay)
	}
	if f.Hang {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		entry.Status = 0
		s.record(entry)
		return true
	}
	return !f.After && s.faultAnswer(w, f, entry)
}

// faultAnswer drops the connection or answers the fault's status, and reports whether
// it did either.
func (s *Sim) faultAnswer(w http.ResponseWriter, f *Fault, entry Request) bool {
	switch {
	case f.DropConn:
		entry.Status = 0
		s.record(entry)
		dropConn(w)
	case f.Status != 0:
		entry.Status = f.Status
		s.record(entry)
		writeFault(w, f)
	default:
		return false
	}
	return true
}
