// Package pve is the typed Proxmox VE API client used by pvebill.
//
// It is layered the same way throughout:
//
//   - One transport method, [Client.DoRequest], speaks HTTP to /api2/json with an
//     API token, retries only transient failures with a jittered, context-aware
//     backoff, records metrics, and sorts every Proxmox error once into a kind
//     (sentinel errors such as [ErrNotFound], [ErrLocked], [ErrTransient]) so that
//     callers only ever use errors.Is and errors.As.
//   - Domain clients carry their identity and build the paths:
//     c.Node("pve1").LXC(5001).Config(ctx), c.Node("pve1").QEMU(9000).Clone(ctx, req),
//     c.Cluster().NextID(ctx, nil).
//   - Every asynchronous Proxmox call comes as a pair: X waits for the task and
//     returns a [TaskResult] (exit status, warnings, log tail on failure), XAsync
//     returns the UPID. A failed task is a [*TaskError] of kind [ErrTaskFailed].
//
// Request and response shapes live in the *_types.go files. Responses are
// decoded leniently: Proxmox sends some integers as JSON strings and booleans as
// 0/1, so [Int], [Float] and [Bool] accept every spelling seen in the field.
//
// The container client deliberately has no suspend method: Proxmox's container
// status/suspend is an experimental CRIU checkpoint that stops the container, not
// a pause, and pvebill never calls it (R13, R15 in docs/design.md).
//
// The API token secret never appears in an error string, a log line or
// [Config.String].
//
// The client imports nothing of pvebill but its own subpackages (pveconf;
// pvesim in tests): it knows no services, plans or database.
package pve
