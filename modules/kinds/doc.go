// Package kinds defines the Module interface every guest kind implements (modules/lxc for
// containers, modules/qemu for VMs), the optional interfaces of what only some kinds do
// (kinds.go), the ownership stamp (R39), the one cluster type and the registry. No flow
// (provision, reinstall) and no kind-specific code lives here.
//
// An operation moves through these states (docs/design.md §1):
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
//     `var _ kinds.Module = (*Module)(nil)`;
//  2. its vocabulary kept apart from the other kinds' (R12): no shared field meaning two things;
//  3. each optional capability (kinds.go: Cloner, SuspendModer, Reinstaller with
//     reinstall.Reader ...) in a file of its own in the kind's package; the capability list
//     is computed from what the module implements (Capabilities), never written elsewhere;
//  4. registered in the one table, stack.Kinds (modules/stack);
//  5. two test plans that offer only the kind (modules/provision's testPlans): the
//     conformance suite (TestKindConformance) then runs the whole lifecycle with it on the
//     simulator, failing each write that lifecycle sends once, in a run of its own.
//
// Nothing outside the kinds' packages compares a guest kind (TestNoKindComparisonsOutsideKinds).
package kinds
