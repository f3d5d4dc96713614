// Package bench is pvebill's performance harness (`make bench`, issue 7). It has no code of
// its own outside its tests: TestBench runs its scenarios against the Proxmox simulator, the
// real server, executor, sampler and database, and reports each figure as a ratio against a
// baseline measured in the same run, or as a count, next to its target.
//
// Run at full scale with
//
//	go test -count=1 -timeout 60m -run '^TestBench$' ./scripts/bench -args -bench.full -bench.out=results.json
//
// (what `make bench` does): it prints the table, writes it to scripts/bench/results.json and
// fails when a target is missed. Without -bench.full the same scenarios run scaled down in a few
// seconds as part of `make test`; then only the counts are held to their targets, since ratios of
// tiny, race-instrumented runs are noise.
//
// The scenarios:
//
//  1. Sampler at scale: containers on nodes behind pvesim.Busy (3 workers a node, log-normal
//     service times, pvesim.DefaultMedian); calls per round, round time against the lower bound
//     computed from the front's log of served requests, the same in the per-container fallback
//     mode with the client's concurrency per node, and RSS over the rounds.
//  2. Webhook overhead: signed create and signed GET /v1/services/{id} through the real server
//     against a net/http + database/sql server in the same binary doing the same work, and the
//     signature check plus validation against a bare loopback handler.
//  3. Provisioning throughput: creates submitted at once against the busy simulator with a fixed
//     task time, against the bound the simulator's workers and the task time set.
//  4. Task-wait overhead: a single create end to end minus the task time, and the task-status polls.
//  5. Metrics exposition: /metrics with 1,000 and 10,000 sampled guests.
//  6. Bucket flush: batched upsert against row by row.
//  7. Usage tiers (R45): storage per guest at steady state after 1,000 guests' three simulated
//     years (5-minute buckets synthesised only where the roll-up reads them, the real roll-up and
//     retention jobs doing the rest), a month's report of 10,000 services from the tiers and of
//     the fully sampled 1,000 against their 5-minute buckets alone, one day's roll-up of 10,000
//     services against the batched insert of that day's buckets.
//  8. Console relay (R41): a keystroke's round trip through pvebill's relay against the same
//     straight to the simulator's terminal in the same run, a 1 MiB/s typed stream both ways,
//     and 500 sessions open at once (each echoes its own word), with the heap per session and
//     the goroutines left after they close.
//  9. Scheduled backups (R42): 1,000 guests on four nodes backed up in one scheduled window by
//     two replicas, one vzdump per node at a time; every guest once, no overlap in the
//     simulator's vzdump log, nothing lost by rotation, the window against the sum of the
//     busiest node's backup times.
//  10. IPv6 pools (R54): 10,000 /64 assignments from a /48 by 100 concurrent creates against
//     10,000 IPv4 addresses by the same 100 in the same run: no duplicate, the throughput ratio,
//     and the database bytes per assignment.
//  12. Placement and drain (R52, R53): 1,000 creates (one in three a VM whose template is named
//     by name, one copy per node) submitted 32 at once to four nodes of 64, 128, 128 and 256
//     GiB: the spread of the nodes' committed shares, nodes over their memory, nodes holding
//     VMs; then a drain of the 64 GiB node: its time against the sum of the simulator's
//     migration times at one migration per node, failed migrations, guests lost or left
//     stopped.
package bench
