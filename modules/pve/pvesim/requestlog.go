package pvesim

import (
	"net/url"
	"sync"
	"time"
)

// The request log and the schema violations, for tests to assert on.

// requestLog is the log of API requests and schema violations, and the count of
// container suspend calls since the last ResetLog.
type requestLog struct {
	logMu      sync.Mutex
	log        []Request
	violations []Violation
	lxcSuspend int
}

// Request is one entry of the request log.
type Request struct {
	Method string     `json:"method"`
	Path   string     `json:"path"` // relative to /api2/json
	Form   url.Values `json:"form"`
	Status int        `json:"status"`
	Time   time.Time  `json:"time"`
	Node   string     `json:"node"`
	// Template is the path in Proxmox's schema the request matched ("/nodes/{node}/lxc"),
	// empty when none: a fault injected on it hits the same call again, whatever node or vmid.
	Template string `json:"template,omitempty"`
	// Task is set when the answer was a task's UPID.
	Task bool `json:"task,omitempty"`
}

// Requests returns a copy of the request log.
func (s *Sim) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	return out
}

// ResetLog empties the request log and the schema violations.
func (s *Sim) ResetLog() {
	s.logMu.Lock()
	s.log = nil
	s.violations = nil
	s.lxcSuspend = 0
	s.logMu.Unlock()
}

// SchemaViolations lists every request real Proxmox would have refused by its API schema
// (unknown path or method, unknown, missing or malformed parameters).
func (s *Sim) SchemaViolations() []Violation {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// LXCSuspendCalls counts POST .../lxc/{vmid}/status/suspend requests since the last ResetLog.
func (s *Sim) LXCSuspendCalls() int {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.lxcSuspend
}

func (s *Sim) record(e Request) {
	s.logMu.Lock()
	s.log = append(s.log, e)
	if limit := s.opts.MaxLog; limit > 0 && len(s.log) > limit {
		s.log = append([]Request(nil), s.log[len(s.log)-limit:]...)
	}
	s.logMu.Unlock()
}

func (s *Sim) addViolation(v Violation) {
	s.logMu.Lock()
	s.violations = append(s.violations, v)
	s.logMu.Unlock()
}
