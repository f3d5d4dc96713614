package plans

import "pvebill/i18n"

// ReasonNoConsoleUser is why the console capability is refused on a cluster configured
// without a console user (R41): an API token cannot open a console, so the cluster needs a
// Proxmox user of its own (docs/proxmox.md §14). Permanent: no retry helps until the operator
// configures one.
const ReasonNoConsoleUser = "capability.cluster_has_no_console_user"

// ReasonConsoleSecretNotSet is why the console capability is refused when console.secret is
// not set (R41): no console URL can be signed. Permanent, like a missing console user: only the
// operator's configuration changes it. The reason names the setting.
const ReasonConsoleSecretNotSet = "capability.console_secret_not_set"

// ConsoleUsers reports whether a cluster has a console user (R41).
type ConsoleUsers func(cluster string) bool

// consoleCapability refines the console capability of a plan's guest types by the console's
// configuration: a kind that has a console offers none on a cluster without a console user, or
// anywhere while console.secret is not set (the cluster's missing user is named first: it is
// the one a cluster's operator sees).
func consoleCapability(caps map[GuestType]Set, p Plan, o Options) {
	var reason string
	switch {
	case o.ConsoleUsers != nil && !o.ConsoleUsers(p.Cluster):
		reason = ReasonNoConsoleUser
	case o.NoConsoleSecret:
		reason = ReasonConsoleSecretNotSet
	default:
		return
	}
	for _, set := range caps {
		if set[CapConsole].Available {
			set[CapConsole] = State{Refusal: i18n.Permanent, Reason: reason}
		}
	}
}
