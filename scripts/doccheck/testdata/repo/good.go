// Package good cites only what exists: R1 and R2 (also as R1–R2), docs/design.md §1,
// docs/proxmox.md §5.6 and §11.6, a citation broken over lines (docs/proxmox.md
// §5.6), §5.6 and §11.6 of docs/proxmox.md, and GET .../config.
package good

/* A block comment citing R2 and docs/proxmox.md §11.6. */

// TestR99Name is not a rule citation (no word boundary before the R).
const path = "docs/proxmox.md"

// An id in a string is code, not a citation.
var code = "R99"
