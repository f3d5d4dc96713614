package operation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"pvebill/i18n"
	"pvebill/modules/pve"
)

// ProblemOf sorts any error of an operation's Proxmox calls into a typed problem, in one place:
// task failures are proxmox_task_failed, unreachable clusters proxmox_unavailable, protection
// and locks the matching blockers (the lock's name kept as the blocker's parameter).
func ProblemOf(err error) error {
	var p *i18n.Problem
	if errors.As(err, &p) {
		return p
	}
	var apiErr *pve.APIError
	switch {
	case errors.Is(err, pve.ErrTaskFailed):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	case errors.Is(err, pve.ErrProtected):
		return Blocked(ProtectionEnabled.Blocker(nil)).Perm(i18n.Temporary).Wrap(err)
	case errors.Is(err, pve.ErrLocked):
		lock := ProxmoxLock.Blocker(map[string]string{"lock": lockName(err)})
		return Blocked(lock).Perm(i18n.Temporary).Wrap(err)
	case errors.Is(err, pve.ErrNotAllowed):
		// The cluster's agent (or the client itself) refused a call outside the route table
		// (R57): asking again cannot help until the agent is updated; the agent logs the call.
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Perm(i18n.Permanent).
			With(i18n.ParamReason, "the cluster's agent refused a call pvebill makes: update the agent").Wrap(err)
	case errors.Is(err, pve.ErrTransient), errors.Is(err, pve.ErrAuth), errors.Is(err, pve.ErrTLS),
		errors.Is(err, context.DeadlineExceeded):
		return Unavailable(err)
	case errors.As(err, &apiErr):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	}
	return err
}

// lockName is the lock Proxmox named in a "is locked (name)" error, or "unknown".
func lockName(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "is locked ("); i >= 0 {
		rest := msg[i+len("is locked ("):]
		if j := strings.IndexByte(rest, ')'); j >= 0 {
			return rest[:j]
		}
	}
	return "unknown"
}

// Unavailable is the temporary proxmox_unavailable refusal, err its logged cause.
func Unavailable(err error) *i18n.Problem {
	return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).Wrap(err)
}

// NotOurs refuses a guest at a service's vmid that does not carry the service's stamp, or is of
// another kind (R39): nothing is changed on it.
func NotOurs(vmid int) *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeGuestNotOurs).Perm(i18n.Permanent).
		With("vmid", fmt.Sprint(vmid))
}

// NotAvailable is the temporary refusal of something this build does not offer (a guest kind
// without a module, or without the capability asked for).
func NotAvailable() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeNotYetAvailable).Perm(i18n.Temporary)
}

// Interrupted refuses an operation whose transient secrets lived in the memory of a process
// that is gone: nothing was touched; the caller asks again.
func Interrupted() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeOperationInterrupted).Perm(i18n.Temporary)
}

// NotRunning is the refusal of an action that needs the guest running (a reboot, a console).
func NotRunning() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeGuestNotRunning).Perm(i18n.Temporary)
}
