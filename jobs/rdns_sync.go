package jobs

import "context"

// RDNSSyncer sends the reverse DNS records whose next attempt is due to PowerDNS
// (modules/rdns.Service).
type RDNSSyncer interface {
	SyncDue(ctx context.Context) error
}

// RDNSSync retries the PTR record changes PowerDNS does not have yet (R55): records set while
// PowerDNS was down, and the removals of terminated services' records. Each record waits
// between attempts (30 s doubling to 1 h); a record is claimed while it is sent, so replicas and
// the inline attempt of a PUT never talk to PowerDNS about one address at once.
type RDNSSync struct {
	Syncer RDNSSyncer
}

// Name implements Job.
func (RDNSSync) Name() string { return "rdns_sync" }

// Run implements Job.
func (j RDNSSync) Run(ctx context.Context) error { return j.Syncer.SyncDue(ctx) }
