package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
)

// ctxState is the gin context key of a request's reqState.
const ctxState = "pvebill.request"

// reqState is what the middleware chain learns about a request (its id, negotiated language,
// body, client and ?wait), kept in one context value: one allocation and one map entry per
// request instead of one of each per item.
type reqState struct {
	id      string
	lang    string
	hasLang bool
	body    []byte
	client  *APIClient
	wait    time.Duration
}

// state returns the request's state, creating it for a handler reached without the request id
// middleware.
func state(c *gin.Context) *reqState {
	if v, ok := c.Get(ctxState); ok {
		return v.(*reqState)
	}
	st := &reqState{}
	c.Set(ctxState, st)
	return st
}

// maxBodyBytes is the request body limit (1 MiB); larger bodies get 413.
const maxBodyBytes = 1 << 20

func requestID(c *gin.Context) string { return state(c).id }

// requestIDMiddleware takes a sane X-Request-Id from the caller or makes one.
func requestIDMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if !serviceIDPattern.MatchString(id) {
			id = newRequestID()
		}
		c.Set(ctxState, &reqState{id: id})
		c.Header("X-Request-Id", id)
		c.Next()
	}
}

// newRequestID returns 24 random hex digits. A request id correlates log lines and answers and
// is no secret, so it comes from the runtime's per-thread generator rather than a system call
// for each request.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.EncodeToString(b[:])
}

// routeUnmatched and methodOther are the label and log values of a request outside the route
// table and of a method outside knownMethods (R49).
const (
	routeUnmatched = "unmatched"
	methodOther    = "other"
)

// knownMethods are the methods kept as they are in labels and log lines.
var knownMethods = map[string]string{http.MethodGet: http.MethodGet, http.MethodHead: http.MethodHead,
	http.MethodPost: http.MethodPost, http.MethodPut: http.MethodPut, http.MethodPatch: http.MethodPatch,
	http.MethodDelete: http.MethodDelete, http.MethodOptions: http.MethodOptions}

// methodLabel folds a request method into the closed set of knownMethods and methodOther.
func methodLabel(m string) string {
	if v, ok := knownMethods[m]; ok {
		return v
	}
	return methodOther
}

// routeLabel is the request's route template, or routeUnmatched.
func routeLabel(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return routeUnmatched
}

// quietRoutes are answered so often (probes, scrapes) that their lines are logged at debug.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// logLevel is the level of a request's line: error for a 5xx, debug for a quiet route.
func logLevel(route string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case quietRoutes[route]:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// logMiddleware writes one structured line per request: never bodies, headers or secrets, and
// the method folded like the metrics' label (an unknown one can be 64 KB long).
func logMiddleware(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route, status := routeLabel(c), c.Writer.Status()
		level := logLevel(route, status)
		if route == routeUnmatched {
			route = "(unmatched)" // as the access line has always said
		}
		ctx, h := context.Background(), log.Handler()
		if !h.Enabled(ctx, level) {
			return
		}
		// The record goes to the handler directly, without the caller's program counter that
		// Logger methods look up on every call: the source of this line would always be this
		// middleware, and pvebill's handlers do not print it.
		st, now := state(c), time.Now()
		r := slog.NewRecord(now, level, "request", 0)
		r.AddAttrs(slog.String("request_id", st.id), slog.String("method", methodLabel(c.Request.Method)),
			slog.String("route", route), slog.Int("status", status), slog.Int64("duration_ms", now.Sub(start).Milliseconds()))
		if st.client != nil {
			r.AddAttrs(slog.String("client", st.client.ID))
		}
		_ = h.Handle(ctx, r)
	}
}

// recoveryMiddleware turns a panic into a problem+json 500 carrying the request id.
func recoveryMiddleware(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if p := recover(); p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(p)
				}
				log.Error("panic", "request_id", requestID(c), "route", c.FullPath(), "panic", fmt.Sprint(p))
				if !c.Writer.Written() {
					writeProblem(c, i18n.NewProblem(http.StatusInternalServerError, i18n.CodeInternal))
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// httpMetrics are the webhook request series, labelled by route template, never raw path, and
// by a method from a closed set (R49): no request adds a label value.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches the children of a route, method and status code (all from closed sets), so
	// a request costs one map read instead of hashing its label values into both vectors.
	series sync.Map // routeSeries -> *routeChildren
}

// routeSeries names the children of one route, method and status code.
type routeSeries struct {
	route, method string
	code          int
}

type routeChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// durationBuckets reach past the longest long-poll (60 s).
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// children returns the series of a request.
func (m *httpMetrics) children(route, method string, code int) *routeChildren {
	key := routeSeries{route: route, method: method, code: code}
	if v, ok := m.series.Load(key); ok {
		return v.(*routeChildren)
	}
	ch := &routeChildren{requests: m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
		duration: m.duration.WithLabelValues(route, method)}
	m.series.Store(key, ch)
	return ch
}

// newHTTPMetrics registers the HTTP metrics and pvebill_build_info on reg.
func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_http_requests_total",
			Help: "HTTP requests served, by route template, method and status code."}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_http_request_duration_seconds",
			Help: "HTTP request latency, by route template and method.", Buckets: durationBuckets}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration, buildInfo())
	return m
}

// buildInfo is the constant pvebill_build_info gauge: 1, labelled with the module version and
// the Go version the binary was built with.
func buildInfo() prometheus.Collector {
	version, goVersion := "unknown", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "pvebill_build_info",
		Help:        "Always 1; the labels say which build answers.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion}})
	g.Set(1)
	return g
}

func (m *httpMetrics) middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		ch := m.children(routeLabel(c), methodLabel(c.Request.Method), c.Writer.Status())
		ch.requests.Inc()
		ch.duration.Observe(time.Since(start).Seconds())
	}
}

// bodyMiddleware reads the whole body once (at most maxBodyBytes) so the signature, the
// idempotency hash and the JSON decoder all see the same bytes.
func bodyMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > maxBodyBytes {
			writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(maxBodyBytes)))
			return
		}
		raw, err := io.ReadAll(io.LimitReader(c.Request.Body, maxBodyBytes+1))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(maxBodyBytes)))
				return
			}
			writeProblem(c, i18n.NewProblem(http.StatusBadRequest, i18n.CodeMalformedJSON).Wrap(err))
			return
		}
		if len(raw) > maxBodyBytes {
			writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(maxBodyBytes)))
			return
		}
		state(c).body = raw
		c.Request.Body = io.NopCloser(bytes.NewReader(raw))
		c.Next()
	}
}

func rawBody(c *gin.Context) []byte { return state(c).body }
