// Package modules defines the Module interface every guest kind implements (modules/lxc for
// containers, modules/qemu for VMs), the ownership stamp (R39) and the registry.
//
// An operation moves through these states (DESIGN.md §1):
//
//	queued ──claim──▶ running ──▶ succeeded
//	                     │    └──▶ failed                 (nothing irreversible happened)
//	                     └───────▶ needs_reconciliation   (a failure at or after the
//	                                                       irreversible stage; lock kept)
//
// Service states follow: provisioning → active ⇄ suspended → terminated; failed when a create
// failed before a guest was kept.
//
// Adding a guest kind:
//
//  1. a package under modules/ with a type implementing Module, its contract (kind, stage
//     names, limits) as constants at the top of its main file, ending with
//     `var _ modules.Module = (*Module)(nil)`;
//  2. its vocabulary kept apart from the other kinds' (R12): no shared field meaning two things;
//  3. registered in app.go's NewRegistry call;
//  4. the provisioning conformance tests (modules/provision) run against it on the simulator.
package modules
