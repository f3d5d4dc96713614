package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/models"
)

// Idempotency settings (R36).
const (
	idempotencyTTL     = 24 * time.Hour
	idempotencyMaxKey  = 255
	idempotencyWaitFor = 10 * time.Second
)

type captureWriter struct {
	gin.ResponseWriter
	buf bytes.Buffer
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *captureWriter) WriteString(s string) (int, error) {
	w.buf.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}

// idempotencyMiddleware replays the first answer to a POST carrying an Idempotency-Key for
// 24 h, scoped per client. A concurrent duplicate waits for the first to finish and replays
// it, so both have one effect; the same key with another body is 422 idempotency_key_reused.
func (s *Server) idempotencyMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader("Idempotency-Key")
		if c.Request.Method != http.MethodPost || key == "" {
			c.Next()
			return
		}
		if len(key) > idempotencyMaxKey {
			writeProblem(c, i18n.Validation(i18n.FieldError{Field: "Idempotency-Key", Code: i18n.FieldTooLong, Param: "255"}))
			return
		}
		cl := client(c)
		hash := cl.requestHash(c.Request.Method, c.Request.URL.Path, rawBody(c))
		ctx := c.Request.Context()

		if !s.reserveIdempotencyKey(c, cl, key, hash) {
			return // answered: a replay, a refusal or a wait that ended
		}

		cw := &captureWriter{ResponseWriter: c.Writer}
		c.Writer = cw
		c.Next()
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		status := cw.Status()
		if status >= 500 {
			// A server-side failure is not an answer worth replaying: let a retry run again.
			if err := s.db.ReleaseIdempotencyKey(bg, cl.ID, key); err != nil {
				s.log.Error("release idempotency key", "request_id", requestID(c), "err", err)
			}
			return
		}
		if err := s.db.CompleteIdempotencyKey(bg, cl.ID, key, status, cw.Header().Get("Content-Type"),
			cw.Header().Get("Location"), cw.buf.Bytes(), idempotencyTTL); err != nil {
			s.log.Error("store idempotency answer", "request_id", requestID(c), "err", err)
		}
	}
}

// reserveIdempotencyKey takes the key for this request, waiting (up to idempotencyWaitFor) for
// a concurrent duplicate to finish. It reports whether the handler is to run; when not, the
// answer is written: the first answer replayed, idempotency_key_reused for another body,
// idempotency_key_in_progress after the wait, or nothing when the client went away.
func (s *Server) reserveIdempotencyKey(c *gin.Context, cl *APIClient, key, hash string) bool {
	ctx := c.Request.Context()
	deadline := time.Now().Add(idempotencyWaitFor)
	for {
		existing, err := s.db.ReserveIdempotencyKey(ctx, cl.ID, key, hash, idempotencyTTL)
		switch {
		case err != nil:
			writeError(c, s.log, err)
			return false
		case existing == nil:
			return true // ours: run the handler
		case existing.RequestHash != hash:
			writeProblem(c, i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeIdempotencyKeyReused).Perm(i18n.Permanent))
			return false
		case existing.State == models.IdemDone:
			replay(c, existing)
			return false
		case time.Now().After(deadline):
			writeProblem(c, i18n.NewProblem(http.StatusConflict, i18n.CodeIdempotencyInProgress).Perm(i18n.Temporary))
			return false
		}
		select {
		case <-ctx.Done():
			c.Abort()
			return false
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// requestHash identifies a request for its Idempotency-Key (R36) without putting a secret at
// rest (R48): the body may carry a root password, so the hash is an HMAC-SHA256 keyed with the
// client's own secret, which is in the config and not in the database. Guessing a password
// from a stored hash needs that secret too. When a client's secret is rotated, a key reserved
// before the rotation no longer matches its own request: the retry is refused as
// idempotency_key_reused until the record expires (never run twice).
func (cl *APIClient) requestHash(method, path string, body []byte) string {
	mac := hmac.New(sha256.New, cl.secret)
	mac.Write([]byte("idempotency\n" + method + "\n" + path + "\n"))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func replay(c *gin.Context, rec *models.IdempotencyKey) {
	if rec.Location != "" {
		c.Header("Location", rec.Location)
	}
	c.Header("Idempotent-Replayed", "true")
	body := ""
	if rec.ResponseBody != nil {
		body = *rec.ResponseBody
	}
	c.Data(rec.StatusCode, rec.ContentType, []byte(body))
	c.Abort()
}
