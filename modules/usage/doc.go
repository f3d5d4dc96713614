// Package usage turns swap samples into what billing and operators read (R31–R34).
//
// A [Folder] folds the sampler's per-minute readings into 5-minute buckets per service (swap
// avg/max and sample count; memory avg/max, CPU avg and disk max from the same answers; network
// counters as deltas that survive counter resets) and writes them with batched, idempotent
// upserts. A [Reporter] sums the buckets of a period into the usage report of GET /v1/usage,
// with null wherever a value is not known. [GuestMetrics] are the per-guest Prometheus series,
// at most four per guest and removed when the guest stops being sampled.
//
// It calls no Proxmox API: the swap sampler in jobs reads the nodes and hands the samples here.
package usage
