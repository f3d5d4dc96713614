// Package ippool manages IPv4 pools and hands their addresses to services.
//
// A pool is a network on one cluster's bridge: a CIDR, a gateway, an allocation range
// [first, last] and the nameservers a guest is given. Pools are written through the admin API
// (PUT /v1/admin/ip-pools/{name}) or declared in the config file under ip_pools (upserted at
// start, source "file"). A plan that names a pool gets a static address from it for each guest;
// a plan without one leaves the guest on DHCP.
//
// Validation (every failure is a 422 validation_failed naming the field): the name is
// [a-z0-9][a-z0-9._-]{0,62}; the CIDR is an IPv4 network written canonically (no host bits);
// gateway, first and last are IPv4 addresses inside it and none is the network or broadcast
// address (a /31 has neither); first ≤ last; the gateway lies outside [first, last], so that it
// can never be handed to a guest and allocation need not skip it; at most three nameservers
// (what a resolver reads), IPv4 or IPv6, without duplicates.
//
// Allocation: a service holds at most one address per pool, and an address belongs to at most
// one service. Both are unique keys of the ip_allocations table, so they hold across replicas
// whatever the code does. Allocate runs in one short transaction that locks the pool row first
// (SELECT … FOR UPDATE on MySQL; SQLite has a single writer), reads whether the service already
// holds an address (then returns it: Allocate is idempotent), and otherwise inserts the lowest
// free address of the range. A duplicate key — a row written around the lock — makes it pick
// again, a bounded number of times. Release frees every address of a service; a released address
// is free for the next allocation.
//
// Changes that would take addresses away from services are refused with 409 ip_pool_in_use
// (temporary: it can succeed once those services are terminated): deleting a pool that still
// has allocations, and moving or shrinking the range so that an allocated address falls outside
// it. Other changes (gateway, nameservers, bridge, cluster) are allowed while addresses are
// allocated; Lookup returns the pool's current values, which is what a reinstall applies.
// Allocating from a full pool is 409 ip_pool_exhausted (temporary); naming a pool that does not
// exist is 404 ip_pool_not_found.
//
// IPv6 pools (R54): a pool whose CIDR is IPv6 hands each service one prefix of AssignPrefix bits.
// Its allocation row stores the prefix's index inside the CIDR, so the same keys, lock and
// "lowest free" query apply and nothing is stored per possible prefix (pool6.go).
//
// It hands out addresses and nothing more: writing one into a guest's configuration is the guest
// modules' work, and nothing here calls Proxmox.
package ippool
