package pveconf

import (
	"regexp"
	"strings"
)

// MaxSnapshotName is the schema's maxLength of a snapshot name (snapname).
const MaxSnapshotName = 40

// configIDPattern is format pve-configid (pve-common's pve_verify_configid): a letter, then
// letters, digits, "_" or "-", at least two characters, matched case-insensitively.
var configIDPattern = regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]+$`)

// ValidSnapshotName reports whether Proxmox accepts name for a new snapshot: a pve-configid of
// at most 40 characters that is neither "current" (the list's pseudo-entry) nor "pending"
// (any case), which the snapshot API refuses as reserved (docs/proxmox.md §15).
func ValidSnapshotName(name string) bool {
	if len(name) > MaxSnapshotName || !configIDPattern.MatchString(name) {
		return false
	}
	return name != "current" && !strings.EqualFold(name, "pending")
}
