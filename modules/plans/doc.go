// Package plans holds pvebill's products: what a plan offers (guest types, sizes, network, the
// OS catalog per guest type), how a plan is validated before it is saved, what each offered
// guest type can and cannot do (capabilities, R10), and where plans live (the plans table,
// filled from plans_file at start and from the admin API).
//
// A plan is written as a Spec (the body of PUT /v1/admin/plans/{code}, or one entry of
// plans_file) and saved as a Plan: validated and normalised, so that every optional value is
// explicit — swap_mib absent is stored and returned as 0 (R5), vm_suspend_mode absent is stop,
// vm_clone absent is full.
//
// Rules kept here:
//   - R4: a plan names the guest types it offers; with one type that is the type, with two a
//     create must choose (Plan.ChooseGuestType).
//   - R5: swap is explicit; a plan without swap means 0 MiB.
//   - R10: capabilities are data, per offered guest type; what a kind can never do is a
//     permanent refusal, what is not built yet a temporary one, each with a catalog reason.
//
// What differs between the kinds is not kept here: each kind's package implements KindRules
// (its plan fields and OS catalog, what it can never do, how its capabilities follow the plan,
// the refusal of a plan that offers it alone, R15) and registers it when it is loaded.
//
// Plans are data: nothing here calls Proxmox or knows the HTTP layer (it only borrows pveconf's
// storage and volume syntax to validate a plan).
package plans
