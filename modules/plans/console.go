package plans

import "pvebill/i18n"

// ReasonNoConsoleUser is why the console capability is refused on a cluster configured
// without a console user (R41): an API token cannot open a console, so the cluster needs a
// Proxmox user of its own (docs/proxmox.md §14). Permanent: no retry helps until the operator
// configures one.
const ReasonNoConsoleUser = "capability.cluster_has_no_console_user"

// ConsoleUsers reports whether a cluster has a console user (R41).
type ConsoleUsers func(cluster string) bool

// consoleCapability refines the console capability of a plan's guest types by its cluster: a
// kind that has a console offers none on a cluster without a console user.
func consoleCapability(caps map[GuestType]Set, p Plan, users ConsoleUsers) {
	if users == nil || users(p.Cluster) {
		return
	}
	for _, set := range caps {
		if set[CapConsole].Available {
			set[CapConsole] = State{Refusal: i18n.Permanent, Reason: ReasonNoConsoleUser}
		}
	}
}
