// Package bad plants one wrong citation a line.
package bad

// Rule R99 does not exist.
// See DESIGN.md.
// See proxmox-api.md §5.6.
// See docs/proxmox.md §7.9.
// See docs/nothere.md.
// See ../../shared/docs.
var fixtures = "/work/shared/fixtures/pve"

// Rules R1 and R42, a range R2–R77.
var up = "../../../../../../outside"

// Two lines: docs/proxmox.md
// §12.3 is missing.
const last = "§9.9 of docs/proxmox.md"
