package operation_test

import (
	"errors"
	"fmt"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/operation"
	"pvebill/modules/pve"
)

// One mapping of Proxmox errors for every operation: a lock keeps its name in the proxmox_lock
// blocker (the reinstall's own copy used to say "unknown"), protection is its blocker, an
// unreachable cluster is proxmox_unavailable, a failed task proxmox_task_failed, and a problem
// passes through unchanged.
func TestProblemOf(t *testing.T) {
	own := operation.NotOurs(5001)
	cases := []struct {
		err   error
		code  i18n.Code
		block string
		lock  string
	}{
		{fmt.Errorf("destroy container 5001: CT is locked (backup): %w", pve.ErrLocked), i18n.CodeBlocked, "proxmox_lock", "backup"},
		{fmt.Errorf("stop VM 5001: %w", pve.ErrLocked), i18n.CodeBlocked, "proxmox_lock", "unknown"},
		{fmt.Errorf("destroy: %w", pve.ErrProtected), i18n.CodeBlocked, "protection_enabled", ""},
		{fmt.Errorf("list guests: %w", pve.ErrTransient), i18n.CodeProxmoxUnavailable, "", ""},
		{fmt.Errorf("create: %w", pve.ErrTaskFailed), i18n.CodeProxmoxTaskFailed, "", ""},
		{own, i18n.CodeGuestNotOurs, "", ""},
	}
	for _, c := range cases {
		var p *i18n.Problem
		if !errors.As(operation.ProblemOf(c.err), &p) {
			t.Fatalf("%v: not a problem", c.err)
		}
		if p.Code != c.code {
			t.Errorf("%v: code %s, want %s", c.err, p.Code, c.code)
		}
		if c.block == "" {
			if len(p.Blockers) != 0 {
				t.Errorf("%v: blockers %v", c.err, p.Blockers)
			}
			continue
		}
		if len(p.Blockers) != 1 || p.Blockers[0].Code != c.block || p.Blockers[0].Params["lock"] != c.lock {
			t.Errorf("%v: blockers %v, want %s lock=%q", c.err, p.Blockers, c.block, c.lock)
		}
		if p.Permanence != i18n.Temporary {
			t.Errorf("%v: permanence %q", c.err, p.Permanence)
		}
	}
	// R57: a call the agent refuses is a Proxmox-side failure with a stable code, permanent until
	// the agent is updated, never proxmox_unavailable (which would be asked again in vain).
	refused := &pve.APIError{Method: "POST", Path: "/nodes/pve1/lxc", Status: 403, Kind: pve.ErrNotAllowed,
		Message: "the agent refused the call (route_not_allowed)"}
	var rp *i18n.Problem
	if !errors.As(operation.ProblemOf(refused), &rp) || rp.Code != i18n.CodeProxmoxTaskFailed || rp.Status != 502 ||
		rp.Permanence != i18n.Permanent || rp.Params[i18n.ParamReason] == "" {
		t.Fatalf("a refused call: %+v", rp)
	}
	if err := errors.New("plain"); operation.ProblemOf(err) != err { //nolint:errorlint // the very same error comes back, unwrapped
		t.Error("an error that is not Proxmox's is changed")
	}
}

// IsMissing recognises exactly the refusal Missing returns.
func TestIsMissing(t *testing.T) {
	if !operation.IsMissing(fmt.Errorf("target: %w", operation.Missing())) {
		t.Error("Missing not recognised")
	}
	two := operation.Blocked(operation.GuestMissing.Blocker(nil), operation.ProxmoxLock.Blocker(nil))
	if operation.IsMissing(two) || operation.IsMissing(operation.NotOurs(1)) || operation.IsMissing(errors.New("x")) {
		t.Error("something else taken for a missing guest")
	}
}
