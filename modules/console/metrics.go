package console

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Why a console was refused (pvebill_console_refused_total's reason): a closed set (R49).
const (
	reasonDisabled  = "not_configured"   // console.secret is not set
	reasonKind      = "kind_unavailable" // the guest has no console of that kind
	reasonPlan      = "plan_refused"     // the plan offers no console on the cluster (no console user)
	reasonSuspended = "suspended"        // suspended or limited
	reasonNoGuest   = "no_guest"         // terminated or failed
	reasonNotReady  = "not_ready"        // being created, replaced or reconciled
	reasonInvalid   = "invalid_token"    // malformed or of another key
	reasonExpired   = "expired"          // not opened within 60 s
	reasonUsed      = "used"             // opened before
	reasonForeign   = "service_changed"  // the token's service is gone or no longer the client's
	reasonGuest     = "guest_refused"    // the guest is not the service's, or does not run
	reasonUpstream  = "upstream_failed"  // Proxmox did not open the console
	reasonInternal  = "internal"         // the database failed
	reasonOrigin    = "foreign_origin"   // the WebSocket was opened from another site's page
	reasonLimit     = "session_limit"    // the service or the client has the most sessions open
)

// Why a session ended (pvebill_console_sessions_ended_total's reason): a closed set (R49).
const (
	endClosed         = "closed"          // the browser left
	endUpstream       = "upstream_closed" // Proxmox ended the console (the guest stopped...)
	endMaxSession     = "max_session"     // console.max_session reached
	endServiceChanged = "service_changed" // suspended, limited, terminated, reinstalled, restored
	endShutdown       = "shutdown"        // this pvebill is stopping
)

// RefusalReasons and EndReasons are the closed label sets, for the tests and the dashboard.
var (
	RefusalReasons = []string{reasonDisabled, reasonKind, reasonPlan, reasonSuspended, reasonNoGuest, reasonNotReady,
		reasonInvalid, reasonExpired, reasonUsed, reasonForeign, reasonGuest, reasonUpstream, reasonInternal,
		reasonOrigin, reasonLimit}
	EndReasons   = []string{endClosed, endUpstream, endMaxSession, endServiceChanged, endShutdown}
	consoleKinds = []string{string(KindTerminal), string(KindVNC)}
)

// Metrics are the console's Prometheus series (R41, R49).
type Metrics struct {
	open     *prometheus.GaugeVec
	issued   *prometheus.CounterVec
	opened   *prometheus.CounterVec
	refused  *prometheus.CounterVec
	ended    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the console metrics on reg (nil: unregistered, for tests), with every
// label value of the closed sets present from the start.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_console_sessions_open",
			Help: "Console sessions being relayed by this process, by kind (R41)."}, []string{"kind"}),
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_console_urls_issued_total",
			Help: "One-time console URLs handed out, by kind (R41)."}, []string{"kind"}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_console_sessions_opened_total",
			Help: "Console sessions opened (token claimed, Proxmox console connected), by kind (R41)."}, []string{"kind"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_console_refused_total",
			Help: "Console URLs or sessions refused, by reason (R41)."}, []string{"reason"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_console_sessions_ended_total",
			Help: "Console sessions ended, by reason (R41)."}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_console_session_duration_seconds",
			Help:    "How long console sessions lasted, by kind (R41).",
			Buckets: []float64{1, 10, 60, 300, 900, 1800, 3600, 7200}}, []string{"kind"}),
	}
	for _, k := range consoleKinds {
		m.open.WithLabelValues(k)
		m.issued.WithLabelValues(k)
		m.opened.WithLabelValues(k)
		m.duration.WithLabelValues(k)
	}
	for _, r := range RefusalReasons {
		m.refused.WithLabelValues(r)
	}
	for _, r := range EndReasons {
		m.ended.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.open, m.issued, m.opened, m.refused, m.ended, m.duration)
	}
	return m
}
