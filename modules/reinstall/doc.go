// Package reinstall is the reinstall of a service's guest, a replacement in place: destroy,
// then create again (docs/design.md R18–R30). The flow, its intents, blockers and labels live
// here; the reads and calls only one kind knows (a container's create, a VM's re-clone) live in
// the kind's package (modules/lxc/reinstall.go, modules/qemu/reinstall.go), never here.
//
// Phase 1 (preview) only reads: the container's active and pending config are labelled mount by
// mount — a data label (erased, excluded, untouched, unknown; preserved is in the vocabulary but
// not offered) and a mount fate (recreated for rootfs, removed for everything else) — and the
// nine blockers are judged. Phase 2 (apply) carries the preview back as confirmations ({key,
// volume}, never the label), checks the blockers again on our side, and the executor checks them
// a third time against the config it re-reads before destroying; any difference is
// preview_stale and nothing is destroyed. A failure at or after destroy is
// needs_reconciliation, which keeps the service lock closed until an operator reconciles.
//
// Intents are never written by a worker: a read advances them from their operation with a
// compare-and-swap on generation, and the loser of the swap returns the winner's row.
package reinstall
