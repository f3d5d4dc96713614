package rdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/plans"
)

// Timing of the reverse DNS records' sync (R55).
const (
	// callTimeout bounds one PowerDNS request.
	callTimeout = 10 * time.Second
	// claimTTL is how long a claim on an address keeps other replicas away; longer than a call.
	claimTTL = 30 * time.Second
	// firstRetry is the wait after the first failed attempt; it doubles up to maxRetry.
	firstRetry = 30 * time.Second
	maxRetry   = time.Hour
	// syncBatch is how many due records one round of the job reads at a time.
	syncBatch = 100
	// MaxRecords is how many addresses of one service may have a name: an IPv6 /64 holds 2^64
	// addresses, and every name is a record in PowerDNS.
	MaxRecords = 64
	// maxErrorLen is the width of rdns_records.last_error.
	maxErrorLen = models.MaxRDNSErrorLen
)

// Options configure a Service. DB is required; a nil PowerDNS turns reverse DNS off (PUT is
// refused, the stored records stay as they are).
type Options struct {
	DB       *models.DB
	PowerDNS *PowerDNS
	Log      *slog.Logger
	Metrics  *Metrics
	// Now is the clock (time.Now but in tests).
	Now func() time.Time
}

// Service keeps the services' PTR records: the wanted state in rdns_records, sent to PowerDNS
// once inline and then by the sync job until PowerDNS has it (R55). PowerDNS being down never
// fails a request that only records a change, nor a guest operation.
type Service struct {
	db      *models.DB
	pdns    *PowerDNS
	log     *slog.Logger
	metrics *Metrics
	now     func() time.Time
}

// NewService builds the service.
func NewService(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: o.DB, pdns: o.PowerDNS, log: o.Log, metrics: o.Metrics, now: o.Now}
}

// Enabled reports whether PowerDNS is configured.
func (s *Service) Enabled() bool { return s.pdns != nil }

// SetRequest is the body of PUT /v1/services/{id}/rdns.
type SetRequest struct {
	Address  string `json:"address"`
	Hostname string `json:"hostname"`
}

// Record is one PTR record of a service as the API shows it: the fixed address and hostname,
// then its sync state.
type Record struct {
	Address  string `json:"address"`
	Hostname string `json:"hostname"`
	// Status is pending (not yet in PowerDNS), synced, or failed (PowerDNS refused it).
	Status    string     `json:"status"`
	Attempts  int        `json:"attempts"`
	LastError *string    `json:"last_error"`
	SyncedAt  *time.Time `json:"synced_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

func recordView(r models.RDNSRecord) Record {
	v := Record{Address: r.Address, Hostname: r.Hostname, Status: r.Status, Attempts: r.Attempts,
		UpdatedAt: r.ChangedAt.UTC()}
	if r.LastError != "" {
		msg := r.LastError
		v.LastError = &msg
	}
	if r.SyncedAt != nil && r.Status == models.RDNSSynced {
		t := r.SyncedAt.UTC()
		v.SyncedAt = &t
	}
	return v
}

// Set records hostname as the PTR record of an address the service holds and tries PowerDNS
// once; the answer is the service's records, the new one pending when PowerDNS was not reached.
// Refusals, with nothing written: 422 validation_failed (address, hostname), 409
// capability_refused (reverse DNS not configured, or the address's pool has no reverse_zone),
// 404 not_found (no such service), 422 address_not_assigned, 409 rdns_limit_reached.
func (s *Service) Set(ctx context.Context, k models.ServiceKey, req SetRequest) ([]Record, error) {
	var v i18n.FieldErrors
	addr := checkAddress(&v, req.Address)
	checkHostname(&v, req.Hostname)
	if p := v.Problem(); p != nil {
		return nil, p
	}
	if s.pdns == nil {
		return nil, plans.Refused(plans.CapRDNS, plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonRDNSNotConfigured})
	}
	if err := s.exists(ctx, k); err != nil {
		return nil, err
	}
	row, err := s.db.SetRDNS(ctx, k, addr.String(), req.Hostname, MaxRecords, holder(addr))
	if errors.Is(err, models.ErrRDNSLimit) {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeRDNSLimitReached).Perm(i18n.Permanent).
			With("max", strconv.Itoa(MaxRecords))
	}
	if err != nil {
		return nil, err
	}
	s.attempt(ctx, row)
	return s.List(ctx, k)
}

// holder finds the allocation that holds addr: the IPv4 address itself, or an IPv6 prefix that
// contains it. Its pool must name a reverse zone.
func holder(addr netip.Addr) models.RDNSHolder {
	return func(allocs []models.IPAllocation, pools map[string]models.IPPool) (string, string, error) {
		for _, a := range allocs {
			p, ok := pools[a.Pool]
			if !ok {
				continue
			}
			held, err := models.HeldPrefix(a, p)
			if err != nil {
				return "", "", err
			}
			if !held.Contains(addr) {
				continue
			}
			if p.ReverseZone == "" {
				return "", "", plans.Refused(plans.CapRDNS, plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonRDNSNoReverseZone})
			}
			return p.Name, p.ReverseZone, nil
		}
		return "", "", i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeAddressNotAssigned).
			Perm(i18n.Permanent).With("address", addr.String())
	}
}

// exists refuses a service the client does not have (404 not_found).
func (s *Service) exists(ctx context.Context, k models.ServiceKey) error {
	_, err := s.db.GetService(ctx, k)
	if errors.Is(err, models.ErrNotFound) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	return err
}

// List returns the service's records, ordered by address (IPv4 first); 404 not_found when the
// client has no such service.
func (s *Service) List(ctx context.Context, k models.ServiceKey) ([]Record, error) {
	if err := s.exists(ctx, k); err != nil {
		return nil, err
	}
	rows, err := s.db.ServiceRDNS(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("list reverse dns of %s: %w", k.ServiceID, err)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, _ := netip.ParseAddr(rows[i].Address)
		b, _ := netip.ParseAddr(rows[j].Address)
		return a.Less(b)
	})
	out := make([]Record, 0, len(rows))
	for _, r := range rows {
		out = append(out, recordView(r))
	}
	return out, nil
}

// SyncDue sends every record whose next attempt is due to PowerDNS (the sync job's round). An
// attempt that fails is recorded on its record, not returned; only the database's errors are.
func (s *Service) SyncDue(ctx context.Context) error {
	if s.pdns == nil {
		return nil
	}
	for ctx.Err() == nil {
		rows, err := s.db.DueRDNS(ctx, s.now().UTC(), syncBatch)
		if err != nil {
			return fmt.Errorf("read due reverse dns records: %w", err)
		}
		tried := 0
		for _, r := range rows {
			if s.attempt(ctx, r) {
				tried++
			}
		}
		if len(rows) < syncBatch || tried == 0 {
			return nil
		}
	}
	return ctx.Err()
}

// attempt claims r and sends it to PowerDNS, then records the outcome. It reports whether it
// held the claim (another replica may be at the same address).
func (s *Service) attempt(ctx context.Context, r models.RDNSRecord) bool {
	if s.pdns == nil {
		return false
	}
	// The call to PowerDNS is bounded by ctx (a terminate's short wait, a request's life); the
	// claim and the outcome are recorded even when ctx ends.
	dbctx := context.WithoutCancel(ctx)
	now := s.now().UTC()
	ok, err := s.db.ClaimRDNS(dbctx, r.Address, r.Generation, now, now.Add(claimTTL))
	if err != nil || !ok {
		if err != nil {
			s.log.Warn("rdns: claim", "address", r.Address, "error", err)
		}
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	if r.Action == models.RDNSDelete {
		err = s.pdns.DeletePTR(cctx, r.Zone, netip.MustParseAddr(r.Address))
	} else {
		err = s.pdns.SetPTR(cctx, r.Zone, netip.MustParseAddr(r.Address), r.Hostname)
	}
	cancel()
	o := outcome(err, r.Attempts, s.now().UTC())
	s.metrics.attempted(r.Action, o.Status)
	if err != nil {
		s.log.Warn("rdns: powerdns", "address", r.Address, "action", r.Action, "status", o.Status, "error", o.Error)
	}
	if ferr := s.db.FinishRDNS(dbctx, r, o); ferr != nil {
		s.log.Warn("rdns: record the outcome", "address", r.Address, "error", ferr)
	}
	return true
}

// outcome sorts an attempt's error: none is synced, a refusal by PowerDNS failed, anything else
// (not reached, 5xx) pending; both retried after a backoff that doubles from firstRetry to
// maxRetry with the attempts.
func outcome(err error, attempts int, now time.Time) models.RDNSOutcome {
	if err == nil {
		return models.RDNSOutcome{Status: models.RDNSSynced}
	}
	wait := firstRetry
	for i := 0; i < attempts && wait < maxRetry; i++ {
		wait *= 2
	}
	o := models.RDNSOutcome{Status: models.RDNSPending, Error: err.Error(), Next: now.Add(min(wait, maxRetry))}
	if Refused(err) {
		o.Status = models.RDNSFailed
	}
	if len(o.Error) > maxErrorLen {
		o.Error = strings.ToValidUTF8(o.Error[:maxErrorLen], "")
	}
	return o
}

// SyncService tries the service's records that are not synced once now (after a terminate
// marked them for removal). Failures stay with the records for the sync job.
func (s *Service) SyncService(ctx context.Context, k models.ServiceKey) {
	if s.pdns == nil {
		return
	}
	rows, err := s.db.UnsyncedRDNS(ctx, k)
	if err != nil {
		s.log.Warn("rdns: read the service's records", "service_id", k.ServiceID, "error", err)
		return
	}
	for _, r := range rows {
		s.attempt(ctx, r)
	}
}
