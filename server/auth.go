package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/server/config"
)

// Signature headers (API.md Conventions).
const (
	HeaderKey       = "X-Pvebill-Key"
	HeaderTimestamp = "X-Pvebill-Timestamp"
	HeaderSignature = "X-Pvebill-Signature"
	// SignatureWindow is how far a request's timestamp may be from the server's clock.
	SignatureWindow = 300 * time.Second
)

// Client is an authenticated API client.
type Client struct {
	ID     string
	secret []byte
	scopes map[string]bool
}

// HasScope reports whether the client holds a scope.
func (c *Client) HasScope(s string) bool { return c.scopes[s] }

// Clients is the config-defined set of API clients.
type Clients map[string]*Client

// NewClients builds the client table from the config.
func NewClients(cfg []config.Client) Clients {
	out := Clients{}
	for _, c := range cfg {
		cl := &Client{ID: c.ID, secret: []byte(c.Secret), scopes: map[string]bool{}}
		for _, s := range c.Scopes {
			cl.scopes[s] = true
		}
		out[c.ID] = cl
	}
	return out
}

// Sign computes the v1 signature of a request: hex HMAC-SHA256(secret, timestamp "\n" METHOD
// "\n" request URI with query "\n" raw body).
func Sign(secret []byte, timestamp, method, requestURI string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(method))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(requestURI))
	mac.Write([]byte{'\n'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a signed request against the client table at time now. It returns the client
// or a signature_invalid / signature_expired problem. Unknown clients and wrong signatures are
// indistinguishable to the caller; the comparison is constant-time.
func (cs Clients) Verify(key, timestamp, signature, method, requestURI string, body []byte, now time.Time) (*Client, error) {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if key == "" || signature == "" || err != nil || len(timestamp) > 12 {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureInvalid)
	}
	cl, ok := cs[key]
	secret := []byte("\x00unknown-client-dummy-secret")
	if ok {
		secret = cl.secret
	}
	want := Sign(secret, timestamp, method, requestURI, body)
	match := subtle.ConstantTimeCompare([]byte(want), []byte(strings.TrimSpace(signature))) == 1
	if !ok || !match {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureInvalid)
	}
	skew := now.Sub(time.Unix(ts, 0))
	if skew > SignatureWindow || skew < -SignatureWindow {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureExpired)
	}
	return cl, nil
}

func (s *Server) authMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		cl, err := s.clients.Verify(c.GetHeader(HeaderKey), c.GetHeader(HeaderTimestamp), c.GetHeader(HeaderSignature),
			c.Request.Method, c.Request.URL.RequestURI(), rawBody(c), s.now())
		if err != nil {
			writeError(c, s.log, err)
			return
		}
		c.Set(ctxClient, cl)
		c.Next()
	}
}

// requireScope lets a request through when its client holds any of the scopes.
func requireScope(scopes ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		cl := client(c)
		for _, s := range scopes {
			if cl != nil && cl.HasScope(s) {
				c.Next()
				return
			}
		}
		writeProblem(c, i18n.NewProblem(http.StatusForbidden, i18n.CodeForbidden))
	}
}

func client(c *gin.Context) *Client {
	if v, ok := c.Get(ctxClient); ok {
		return v.(*Client)
	}
	return nil
}
