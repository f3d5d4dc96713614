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
	client  *Client
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

// MaxBodyBytes is the request body limit (1 MiB); larger bodies get 413.
const MaxBodyBytes = 1 << 20

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

// logMiddleware writes one structured line per request: never bodies, headers or secrets.
func logMiddleware(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "(unmatched)"
		}
		status := c.Writer.Status()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
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
		r.AddAttrs(slog.String("request_id", st.id), slog.String("method", c.Request.Method),
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
				if p == http.ErrAbortHandler {
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

// HTTPMetrics are the webhook request series, labelled by route template, never raw path.
type HTTPMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches the children of matched routes, so a request costs one map read instead
	// of hashing its label values into both vectors.
	series sync.Map // routeSeries -> *routeChildren
}

// routeSeries names the children of one matched route, method and status code.
type routeSeries struct {
	route, method string
	code          int
}

type routeChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// children returns the series of a request, cached for matched routes (their number is bounded
// by the route table; an unmatched path may carry any method, so those are not kept).
func (m *HTTPMetrics) children(route, method string, code int) *routeChildren {
	key := routeSeries{route: route, method: method, code: code}
	if v, ok := m.series.Load(key); ok {
		return v.(*routeChildren)
	}
	ch := &routeChildren{requests: m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
		duration: m.duration.WithLabelValues(route, method)}
	if route != "unmatched" {
		m.series.Store(key, ch)
	}
	return ch
}

// NewHTTPMetrics registers the HTTP metrics on reg.
func NewHTTPMetrics(reg prometheus.Registerer) *HTTPMetrics {
	m := &HTTPMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_http_requests_total",
			Help: "HTTP requests served, by route template, method and status code."}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_http_request_duration_seconds",
			Help: "HTTP request latency, by route template and method.", Buckets: prometheus.DefBuckets}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *HTTPMetrics) middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		ch := m.children(route, c.Request.Method, c.Writer.Status())
		ch.requests.Inc()
		ch.duration.Observe(time.Since(start).Seconds())
	}
}

// bodyMiddleware reads the whole body once (at most MaxBodyBytes) so the signature, the
// idempotency hash and the JSON decoder all see the same bytes.
func bodyMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > MaxBodyBytes {
			writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(MaxBodyBytes)))
			return
		}
		raw, err := io.ReadAll(io.LimitReader(c.Request.Body, MaxBodyBytes+1))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(MaxBodyBytes)))
				return
			}
			writeProblem(c, i18n.NewProblem(http.StatusBadRequest, i18n.CodeMalformedJSON).Wrap(err))
			return
		}
		if len(raw) > MaxBodyBytes {
			writeProblem(c, i18n.NewProblem(http.StatusRequestEntityTooLarge, i18n.CodeBodyTooLarge).With("limit", strconv.Itoa(MaxBodyBytes)))
			return
		}
		state(c).body = raw
		c.Request.Body = io.NopCloser(bytes.NewReader(raw))
		c.Next()
	}
}

func rawBody(c *gin.Context) []byte { return state(c).body }
