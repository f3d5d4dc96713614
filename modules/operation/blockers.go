package operation

import (
	"errors"
	"net/http"

	"pvebill/i18n"
)

// BlockerCode names a reason an operation is refused before anything irreversible happens
// (R25). Each has a phrase under blocker.<code> in the nine catalogs; a reason that is not a
// BlockerCode cannot be shown.
type BlockerCode string

// The blockers (R25).
const (
	GuestMissing           BlockerCode = "guest_missing"
	ProtectionEnabled      BlockerCode = "protection_enabled"
	ProxmoxLock            BlockerCode = "proxmox_lock"
	BackupOrRestoreRunning BlockerCode = "backup_or_restore_running"
	ProtectedBackupExists  BlockerCode = "protected_backup_exists"
	RootfsWouldShrink      BlockerCode = "rootfs_would_shrink"
	RootfsSizeUnknown      BlockerCode = "rootfs_size_unknown"
	MountUnclassifiable    BlockerCode = "mount_unclassifiable"
	ReinstallInProgress    BlockerCode = "reinstall_in_progress"
)

// BlockerCodes lists the codes in the order a reinstall's checks report them.
var BlockerCodes = []BlockerCode{GuestMissing, ProtectionEnabled, ProxmoxLock, BackupOrRestoreRunning,
	ProtectedBackupExists, RootfsWouldShrink, RootfsSizeUnknown, MountUnclassifiable, ReinstallInProgress}

// Blocker is a blocker as the problem layer carries it.
func (c BlockerCode) Blocker(params map[string]string) i18n.Blocker {
	return i18n.Blocker{Code: string(c), Params: params}
}

// Blocked is the 409 blocked problem carrying bs; the caller sets its permanence.
func Blocked(bs ...i18n.Blocker) *i18n.Problem {
	p := i18n.NewProblem(http.StatusConflict, i18n.CodeBlocked)
	p.Blockers = bs
	return p
}

// Missing is the permanent refusal of a service without a guest.
func Missing() *i18n.Problem {
	return Blocked(GuestMissing.Blocker(nil)).Perm(i18n.Permanent)
}

// IsMissing reports whether err is exactly the refusal Missing returns.
func IsMissing(err error) bool {
	var p *i18n.Problem
	return errors.As(err, &p) && p.Code == i18n.CodeBlocked && len(p.Blockers) == 1 && p.Blockers[0].Code == string(GuestMissing)
}
