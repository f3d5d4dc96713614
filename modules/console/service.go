package console

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// Upstream is one console session at Proxmox, past Proxmox's authentication: what a guest
// kind's console opens (kinds.Consoler). Each Write to Conn is one WebSocket message to
// Proxmox; Greet, when set, is what must pass with the browser before bytes are relayed
// unchanged both ways (a VM's screen: the RFB greeting without a password).
type Upstream struct {
	Conn  net.Conn
	Greet func(browser io.ReadWriter) error
}

// Opener opens guests' consoles: the kinds a guest type offers (the first is the default; none
// when the kind has no console), whether the service's plan offers it one on the service's
// cluster (capability_refused without a console user there), whether a service's guest can
// show one now (its stamp, R39, and that it runs), and its session, opened under ctx
// (cancelling it ends the session).
type Opener interface {
	ConsoleKinds(guestType string) []Kind
	ConsoleOffered(ctx context.Context, svc *models.Service) error
	ConsoleReady(ctx context.Context, svc *models.Service) error
	OpenConsole(ctx context.Context, svc *models.Service, kind Kind) (Upstream, error)
}

// Options configure the console service.
type Options struct {
	DB     *models.DB
	Opener Opener
	Log    *slog.Logger
	// Secret is console.secret; empty turns the console off.
	Secret string
	// PublicURL is console.public_url.
	PublicURL string
	// MaxSession is console.max_session (0: 2h).
	MaxSession time.Duration
	// MaxPerService and MaxPerClient are console.max_sessions_per_service and
	// console.max_sessions_per_client: the most sessions open at once, on every replica, for
	// one service and for one client (0: DefaultMaxPerService, DefaultMaxPerClient).
	MaxPerService int
	MaxPerClient  int
	// Recheck is how often the watcher re-reads the open sessions' services and renews their
	// claims (0: 3s).
	Recheck time.Duration
	// Metrics receives the console metrics; nil registers none.
	Metrics *Metrics
	Now     func() time.Time
}

// The default session limits (console.max_sessions_per_service, console.max_sessions_per_client).
const (
	DefaultMaxPerService = 2
	DefaultMaxPerClient  = 20
)

// minSessionLease is the shortest time an open session's claim counts without being renewed:
// long enough for Proxmox to open the console before the watcher's first renewal, short enough
// that the sessions of a replica that died free their places soon.
const minSessionLease = 30 * time.Second

// Service issues console tokens and relays their sessions.
type Service struct {
	o      Options
	tokens *Tokens
	m      *Metrics
	// lease is how long a session's claim counts as open from its claim or last renewal.
	lease time.Duration

	mu       sync.Mutex
	sessions map[string]map[*session]struct{}
	// stopWatch stops the watcher; nil while no session is open (no watcher runs).
	stopWatch chan struct{}
	wg        sync.WaitGroup
}

// New builds the console service.
func New(o Options) *Service {
	if o.MaxSession <= 0 {
		o.MaxSession = 2 * time.Hour
	}
	if o.Recheck <= 0 {
		o.Recheck = 3 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.MaxPerService <= 0 {
		o.MaxPerService = DefaultMaxPerService
	}
	if o.MaxPerClient <= 0 {
		o.MaxPerClient = DefaultMaxPerClient
	}
	return &Service{o: o, tokens: NewTokens(o.Secret), m: o.Metrics, lease: max(minSessionLease, 10*o.Recheck),
		sessions: map[string]map[*session]struct{}{}}
}

// Request is the body of POST /v1/services/{id}/console.
type Request struct {
	Kind string `json:"kind" validate:"omitempty,oneof=terminal vnc"`
}

// Issued is a console URL handed to a billing system.
type Issued struct {
	URL       string    `json:"url"`
	Kind      Kind      `json:"kind"`
	ExpiresAt time.Time `json:"expires_at"`
}

// endingActions are the operations that end a service's console sessions the moment they start
// (R41): the guest is about to be stopped, destroyed or replaced.
var endingActions = []string{"suspend", "terminate", "reinstall", "restore"}

// Issue answers a one-time console URL for a client's service (R41): refused when the service's
// plan does not offer a console on its cluster (no console user there, or console.secret not
// set: capability_refused, permanent), for a service that is not active (suspended or limited:
// service_suspended; being created, changed or reconciled: service_locked; without a guest:
// blocked), and for a kind of console the guest does not have. The URL starts with
// console.public_url, or without one with requestBase (the scheme and host the request came
// to).
func (s *Service) Issue(ctx context.Context, clientID, serviceID string, req Request, requestBase string) (*Issued, error) {
	svc, err := s.o.DB.GetClientService(ctx, clientID, serviceID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return nil, err
	}
	kind, err := s.kindFor(svc, Kind(req.Kind))
	if err != nil {
		return nil, err
	}
	if err := s.offered(ctx, svc); err != nil {
		return nil, err
	}
	if reason, p := s.refusal(ctx, svc); p != nil {
		return nil, s.refuse(reason, p)
	}
	if full, err := s.full(ctx, svc.ClientID, svc.ID, noOwnClaim); err != nil {
		return nil, err
	} else if full {
		return nil, s.refuse(reasonLimit, sessionLimit())
	}
	if err := s.o.Opener.ConsoleReady(ctx, svc); err != nil {
		var p *i18n.Problem
		if errors.As(err, &p) {
			s.m.refused.WithLabelValues(reasonGuest).Inc()
		}
		return nil, err
	}
	g := Grant{ServiceRef: svc.ID, ClientID: clientID, Kind: kind, Expires: s.o.Now().Add(TokenTTL).Truncate(time.Second)}
	tok, err := s.tokens.Issue(&g)
	if err != nil {
		return nil, err
	}
	s.m.issued.WithLabelValues(string(kind)).Inc()
	base := s.o.PublicURL
	if base == "" {
		base = requestBase
	}
	return &Issued{URL: base + "/console/" + tok, Kind: kind, ExpiresAt: g.Expires.UTC()}, nil
}

// offered checks that the service's plan offers its guest a console on its cluster and that
// the console is configured: without console.secret no URL can be signed, and the console is
// refused permanently with the reason that names the setting, before anything reaches Proxmox.
func (s *Service) offered(ctx context.Context, svc *models.Service) error {
	if err := s.o.Opener.ConsoleOffered(ctx, svc); err != nil {
		var p *i18n.Problem
		if errors.As(err, &p) {
			reason := reasonPlan
			if p.Reason == plans.ReasonConsoleSecretNotSet {
				reason = reasonDisabled
			}
			s.m.refused.WithLabelValues(reason).Inc()
		}
		return err
	}
	if s.o.Secret == "" {
		s.m.refused.WithLabelValues(reasonDisabled).Inc()
		return plans.Refused(plans.CapConsole, plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonConsoleSecretNotSet})
	}
	return nil
}

// kindFor is the console kind asked for, or the guest's default; a kind the guest does not
// have is a validation failure of the field, a guest type without a console not available.
func (s *Service) kindFor(svc *models.Service, asked Kind) (Kind, error) {
	offered := s.o.Opener.ConsoleKinds(svc.GuestType)
	switch {
	case len(offered) == 0:
		return "", s.refuse(reasonKind, operation.NotAvailable())
	case asked == "":
		return offered[0], nil
	case slices.Contains(offered, asked):
		return asked, nil
	}
	return "", s.refuse(reasonKind, i18n.Validation(i18n.FieldError{Field: "kind", Code: i18n.FieldNotApplicable,
		Param: svc.GuestType}))
}

// refusal is why a service may not have a console now (nil: it may): it must be active and not
// held by an operation that stops, destroys or replaces its guest.
func (s *Service) refusal(ctx context.Context, svc *models.Service) (string, *i18n.Problem) {
	switch svc.State {
	case models.ServiceActive:
	case models.ServiceSuspended, models.ServiceLimited:
		return reasonSuspended, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceSuspended).Perm(i18n.Temporary).
			With("state", svc.State)
	case models.ServiceTerminated, models.ServiceFailed:
		return reasonNoGuest, operation.Missing()
	default:
		return reasonNotReady, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	}
	ending, err := s.endingLock(ctx, svc)
	if err != nil {
		return reasonInternal, i18n.NewProblem(http.StatusInternalServerError, i18n.CodeInternal).Wrap(err)
	}
	if ending {
		return reasonNotReady, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	}
	return "", nil
}

// endingLock reports whether the service is held by an operation that ends its consoles.
func (s *Service) endingLock(ctx context.Context, svc *models.Service) (bool, error) {
	if svc.LockOperationID == nil {
		return false, nil
	}
	op, err := s.o.DB.GetOperation(ctx, *svc.LockOperationID)
	if errors.Is(err, models.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.Contains(endingActions, op.Action), nil
}

// Whose claims a count of open sessions includes besides the others': none (a URL asked for),
// or the caller's own, just inserted (a WebSocket being opened).
const (
	noOwnClaim = 0
	ownClaim   = 1
)

// full reports whether the service or its client holds as many open sessions as the console
// allows, counted on every replica (the claims' table), own of them being the caller's.
func (s *Service) full(ctx context.Context, clientID string, serviceRef int64, own int64) (bool, error) {
	perService, perClient, err := s.o.DB.OpenConsoleSessions(ctx, clientID, serviceRef, s.o.Now())
	if err != nil {
		return false, err
	}
	return perService-own >= int64(s.o.MaxPerService) || perClient-own >= int64(s.o.MaxPerClient), nil
}

// sessionLimit is the refusal of a console beyond the open sessions allowed: 429, temporary
// (closing a session makes room).
func sessionLimit() *i18n.Problem {
	return i18n.NewProblem(http.StatusTooManyRequests, i18n.CodeConsoleSessionLimit).Perm(i18n.Temporary)
}

// refuse counts a refusal by its reason and returns p.
func (s *Service) refuse(reason string, p *i18n.Problem) *i18n.Problem {
	s.m.refused.WithLabelValues(reason).Inc()
	return p
}

// OperationStarted ends at once, in this process, the console sessions of the service an
// operation that stops, destroys or replaces the guest has just started on (R41). The
// executor calls it as each operation starts; other replicas' sessions notice within Recheck,
// through their own watcher.
func (s *Service) OperationStarted(op *models.Operation) {
	if slices.Contains(endingActions, op.Action) {
		s.End(op.ClientID, op.ServiceID, endServiceChanged)
	}
}

// End ends every session of a client's service in this process, counted under reason.
func (s *Service) End(clientID, serviceID, reason string) {
	key := sessionKey(clientID, serviceID)
	s.endWhere(reason, func(k string) bool { return k == key })
}

// Close ends every session (shutdown) and waits for their relays.
func (s *Service) Close() {
	s.endWhere(endShutdown, func(string) bool { return true })
	s.wg.Wait()
}

// endWhere ends, counted under reason, the sessions whose key matches.
func (s *Service) endWhere(reason string, match func(key string) bool) {
	s.mu.Lock()
	var list []*session
	for key, set := range s.sessions {
		if match(key) {
			list = slices.AppendSeq(list, maps.Keys(set))
		}
	}
	s.mu.Unlock()
	for _, ss := range list {
		ss.end(reason)
	}
}

func sessionKey(clientID, serviceID string) string { return clientID + "\x00" + serviceID }
