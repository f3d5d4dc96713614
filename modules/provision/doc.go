// Package provision is the service layer of the guest lifecycle: it validates create, suspend,
// unsuspend, terminate and change-plan requests, writes their operations, and runs them as
// executor actions through the guest modules (modules/lxc, modules/qemu). It never tells one
// guest kind from another: what differs is an interface of the kind's module (modules/kinds/optional.go).
//
// Create applies the checkout rule (R4), is idempotent per service_id (R36), places the guest
// on the candidate node it leaves least full (R52; a kind that clones only where a template
// serves),
// reserves a vmid in the database under the unique (cluster, vmid) key, confirms it with
// /cluster/nextid, refuses ids that still have volumes named for them, and retries on "already
// exists" a bounded number of times (R2). Every guest it creates carries the service's stamp;
// every later stop, destroy or change first checks it (R39). A retried create adopts the guest
// an earlier attempt made. Root passwords and SSH keys travel as transient secrets (R26).
package provision
