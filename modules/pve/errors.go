package pve

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Error kinds. Every error returned by the client matches exactly one of these
// with errors.Is (an [*APIError] for HTTP and network failures, a [*TaskError]
// for failed tasks). Proxmox reports most conditions as HTTP 500 with free text,
// so the kinds are sorted once, here, from the status code and the message.
var (
	// ErrNotFound: the guest (or task) does not exist on that node. Proxmox
	// answers 500 "Configuration file 'nodes/pve1/lxc/5001.conf' does not
	// exist", "no such VM ('5001')" or 400 "upid: no such task".
	ErrNotFound = errors.New("pve: not found")
	// ErrAlreadyExists: the vmid is taken ("CT 5001 already exists on node
	// 'pve1'", nextid's 400 errors.vmid "VM 5001 already exists").
	ErrAlreadyExists = errors.New("pve: already exists")
	// ErrLocked: the guest config carries a lock ("CT is locked (backup)") or
	// the config lock file could not be taken in time. Not retried by the
	// transport; the caller decides when to try again.
	ErrLocked = errors.New("pve: guest locked")
	// ErrPermission: HTTP 403, e.g. "Permission check failed (/vms/5001,
	// VM.Allocate)" or a token refused for the path.
	ErrPermission = errors.New("pve: permission denied")
	// ErrAuth: HTTP 401; the token is unknown, expired or wrong.
	ErrAuth = errors.New("pve: authentication failed")
	// ErrInvalidParam: HTTP 400, parameter verification failed.
	ErrInvalidParam = errors.New("pve: invalid parameter")
	// ErrNotImplemented: the path or method is not served (Proxmox answers 501
	// for unknown URLs; a 404 or 405 can only come from something in front of
	// it, so it is sorted here too rather than being read as "guest missing").
	ErrNotImplemented = errors.New("pve: not implemented")
	// ErrTransient: a network failure or a gateway status (502, 503, 504, 595,
	// 596, 597). When it also matches [ErrMaybeApplied] the request may have
	// been carried out: read back before trying again.
	ErrTransient = errors.New("pve: transient failure")
	// ErrMaybeApplied marks a transient failure of a non-idempotent request
	// after it was sent (596 or a broken connection on POST/PUT/DELETE).
	ErrMaybeApplied = errors.New("pve: request may have been applied")
	// ErrConflict: the config digest did not match ("detected modified
	// configuration - file changed by other user? Try again.").
	ErrConflict = errors.New("pve: configuration changed concurrently")
	// ErrAlreadyRunning: "CT 5001 already running", "VM 5001 already running".
	ErrAlreadyRunning = errors.New("pve: already running")
	// ErrNotRunning: "CT 5001 not running", "VM 5001 not running". A state
	// error, not a missing guest.
	ErrNotRunning = errors.New("pve: not running")
	// ErrAgentNotRunning: a VM guest agent call whose agent does not answer ("QEMU guest
	// agent is not running") or is not configured ("No QEMU guest agent configured"),
	// docs/proxmox.md §8.6. A stopped VM is ErrNotRunning.
	ErrAgentNotRunning = errors.New("pve: guest agent not running")
	// ErrProtected: "can't remove CT 5001 - protection mode enabled".
	ErrProtected = errors.New("pve: protection mode enabled")
	// ErrServer: any other HTTP 500 from Proxmox. Permanent for this request.
	ErrServer = errors.New("pve: server error")
	// ErrUnexpected: a status code Proxmox is not known to send, or a body
	// that could not be decoded.
	ErrUnexpected = errors.New("pve: unexpected response")
	// ErrTaskFailed: a task stopped with an exit status other than OK or
	// WARNINGS: n. See [*TaskError].
	ErrTaskFailed = errors.New("pve: task failed")
	// ErrTooLarge: the answer was longer than the limit of its endpoint (see
	// bodyLimit); it was not parsed, and no more of it was read. Never retried.
	ErrTooLarge = errors.New("pve: response body too large")
	// ErrTLS: TLS verification failed (an untrusted certificate, or a leaf
	// certificate that matches no pinned fingerprint). Never retried.
	ErrTLS = errors.New("pve: TLS verification failed")
)

// APIError is a failed request, sorted into a Kind. Status is 0 for a network
// failure. Message and Errors hold Proxmox's own text (trailing newline
// trimmed); the token secret is removed from every string before it is stored.
type APIError struct {
	Method       string
	Path         string
	Status       int
	Message      string
	Errors       map[string]string
	Kind         error
	MaybeApplied bool
	Attempts     int
}

// Error renders "pve: METHOD PATH: STATUS MESSAGE (param: text, ...)".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("pve: ")
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	if e.Status == 0 {
		b.WriteString("network error")
	} else {
		b.WriteString(strconv.Itoa(e.Status))
	}
	if e.Message != "" {
		b.WriteByte(' ')
		b.WriteString(e.Message)
	}
	if len(e.Errors) > 0 {
		keys := make([]string, 0, len(e.Errors))
		for k := range e.Errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(e.Errors[k])
		}
		b.WriteByte(')')
	}
	if e.MaybeApplied {
		b.WriteString(" [may have been applied]")
	}
	return b.String()
}

// Unwrap returns the kind, so errors.Is(err, ErrLocked) works.
func (e *APIError) Unwrap() error { return e.Kind }

// Is also matches [ErrMaybeApplied] when set, and [ErrInvalidParam] for every
// 400 (nextid's "already exists" is both a parameter error and a taken id).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrMaybeApplied:
		return e.MaybeApplied
	case ErrInvalidParam:
		return e.Status == 400
	}
	return false
}

// Message patterns, matched against Proxmox's error text. Each one is a real
// Proxmox message shape; see the table test for the full texts.
var (
	reLocked        = regexp.MustCompile(`\b(?:CT|VM) is locked \(|can't lock file '[^']*' - got timeout`)
	reConflict      = regexp.MustCompile(`detected modified configuration`)
	reProtected     = regexp.MustCompile(`protection mode enabled`)
	reExists        = regexp.MustCompile(`\b(?:CT|VM) \d+ already exists`)
	reAlreadyRun    = regexp.MustCompile(`\b(?:CT|VM) \d+ (?:is )?already running`)
	reNotRunning    = regexp.MustCompile(`\b(?:CT|VM) \d+ (?:is )?not running`)
	reAgentDown     = regexp.MustCompile(`QEMU guest agent is not running|No QEMU guest agent configured`)
	reConfigMissing = regexp.MustCompile(`Configuration file '[^']*/(?:lxc|qemu-server)/\d+\.conf' does not exist|no such VM \('?\d+'?\)|unable to find configuration file for VM \d+|no such task`)
)

// classifyMessage sorts a Proxmox error text into a kind, or nil when no
// pattern applies. Order matters: "unable to create CT 5001 - CT is locked
// (create)" is a lock, not an existence problem.
func classifyMessage(msg string) error {
	switch {
	case reLocked.MatchString(msg):
		return ErrLocked
	case reConflict.MatchString(msg):
		return ErrConflict
	case reProtected.MatchString(msg):
		return ErrProtected
	case reExists.MatchString(msg):
		return ErrAlreadyExists
	case reAlreadyRun.MatchString(msg):
		return ErrAlreadyRunning
	case reNotRunning.MatchString(msg):
		return ErrNotRunning
	case reAgentDown.MatchString(msg):
		return ErrAgentNotRunning
	case reConfigMissing.MatchString(msg):
		return ErrNotFound
	}
	return nil
}

// classify sorts an HTTP error response into a kind.
func classify(status int, msg string, errs map[string]string) error {
	switch status {
	case 400:
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if kind := classifyMessage(errs[k]); errors.Is(kind, ErrAlreadyExists) || errors.Is(kind, ErrNotFound) {
				return kind
			}
		}
		return ErrInvalidParam
	case 401:
		return ErrAuth
	case 403:
		return ErrPermission
	case 404, 405, 501:
		return ErrNotImplemented
	case 500:
		if kind := classifyMessage(msg); kind != nil {
			return kind
		}
		return ErrServer
	case 502, 503, 504, 595, 596, 597:
		return ErrTransient
	}
	return ErrUnexpected
}

// TaskError is a task that stopped with a failing exit status. It matches
// [ErrTaskFailed], and additionally the kind its exit status reads as (a
// destroy task that fails with "... protection mode enabled" also matches
// [ErrProtected]).
type TaskError struct {
	Result TaskResult
}

// Error renders the UPID, the exit status and the last log line.
func (e *TaskError) Error() string {
	msg := fmt.Sprintf("pve: task %s failed: %s", e.Result.UPID, e.Result.ExitStatus)
	if n := len(e.Result.LogTail); n > 0 && e.Result.LogTail[n-1] != "TASK ERROR: "+e.Result.ExitStatus {
		msg += " (last log line: " + e.Result.LogTail[n-1] + ")"
	}
	return msg
}

// Unwrap returns [ErrTaskFailed].
func (e *TaskError) Unwrap() error { return ErrTaskFailed }

// Is matches the kind read from the exit status, if any.
func (e *TaskError) Is(target error) bool {
	kind := classifyMessage(e.Result.ExitStatus)
	return kind != nil && kind == target
}
