package kinds

import (
	"errors"
	"fmt"
	"strings"

	"pvebill/modules/pve"
)

// MigrationRefusal is a move Proxmox refused for a cause in the guest itself: it matches
// ErrMigrationRefused, and Reason is Proxmox's own account of the cause.
type MigrationRefusal struct {
	Reason string
	Err    error
}

// Error names the refusal and Proxmox's reason.
func (e *MigrationRefusal) Error() string { return "migration refused: " + e.Reason }

// Unwrap returns the failure Proxmox answered with (nil for a refusal before any call).
func (e *MigrationRefusal) Unwrap() error { return e.Err }

// Is matches ErrMigrationRefused.
func (e *MigrationRefusal) Is(target error) bool { return target == ErrMigrationRefused }

// Refused is the refusal of a migration for reason, before anything was sent.
func Refused(reason string) error { return &MigrationRefusal{Reason: reason} }

// MigrationError sorts a migration's failure: one Proxmox gives for the guest itself is a
// MigrationRefusal whose reason is the task's exit status (with the log line naming the cause,
// when the exit status only says "check log") or the API's message; every other failure
// (unreachable, locked, a task that failed otherwise) is left as it is.
func MigrationError(g Guest, target string, err error) error {
	if err == nil {
		return nil
	}
	var te *pve.TaskError
	var ae *pve.APIError
	reason := ""
	switch {
	case errors.As(err, &te):
		reason = te.Result.ExitStatus
		for _, l := range te.Result.LogTail {
			if strings.Contains(l, "can't migrate ") && l != reason {
				reason = l + "; " + reason
				break
			}
		}
	case errors.As(err, &ae):
		reason = ae.Message
	}
	if refusedMigration(reason) {
		return &MigrationRefusal{Reason: reason, Err: fmt.Errorf("migrate guest %d to %s: %w", g.VMID, target, err)}
	}
	return fmt.Errorf("migrate guest %d to %s: %w", g.VMID, target, err)
}

// refusedMigration reports whether a migration's error names a cause in the guest itself
// (qemu-server's QemuMigrate.pm and pve-container's LXC/Migrate.pm messages).
func refusedMigration(msg string) bool {
	for _, m := range []string{"can't migrate", "cannot migrate", "local devices", "live migration is currently not implemented",
		"non-migratable snapshot", "without with-local-disks"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
