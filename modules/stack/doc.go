// Package stack is pvebill's one wiring: it builds the database, the executor, the guest kinds,
// plans, address pools, clusters, provisioning, reinstalls, the jobs and the HTTP server from a
// configuration, for the command, the test harnesses and the benchmarks alike. It holds no
// behaviour of its own: what a part does lives in that part's package.
package stack
