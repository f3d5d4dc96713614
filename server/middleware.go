package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
)

const (
	ctxRequestID = "pvebill.request_id"
	ctxLang      = "pvebill.lang"
	ctxBody      = "pvebill.body"
	ctxClient    = "pvebill.client"
)

// MaxBodyBytes is the request body limit (1 MiB); larger bodies get 413.
const MaxBodyBytes = 1 << 20

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// requestIDMiddleware takes a sane X-Request-Id from the caller or makes one.
func requestIDMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if len(id) == 0 || len(id) > 64 || !ServiceIDPattern.MatchString(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Set(ctxRequestID, id)
		c.Header("X-Request-Id", id)
		c.Next()
	}
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
		attrs := []any{"request_id", requestID(c), "method", c.Request.Method, "route", route,
			"status", c.Writer.Status(), "duration_ms", time.Since(start).Milliseconds()}
		if cl, ok := c.Get(ctxClient); ok {
			attrs = append(attrs, "client", cl.(*Client).ID)
		}
		if c.Writer.Status() >= 500 {
			log.Error("request", attrs...)
		} else {
			log.Info("request", attrs...)
		}
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
		m.requests.WithLabelValues(route, c.Request.Method, strconv.Itoa(c.Writer.Status())).Inc()
		m.duration.WithLabelValues(route, c.Request.Method).Observe(time.Since(start).Seconds())
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
		c.Set(ctxBody, raw)
		c.Request.Body = io.NopCloser(bytes.NewReader(raw))
		c.Next()
	}
}

func rawBody(c *gin.Context) []byte {
	if v, ok := c.Get(ctxBody); ok {
		return v.([]byte)
	}
	return nil
}
