package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/server/config"
)

// Signature headers of the v1 request signing (openapi.yaml, securitySchemes).
const (
	HeaderKey       = "X-Pvebill-Key"
	HeaderTimestamp = "X-Pvebill-Timestamp"
	HeaderSignature = "X-Pvebill-Signature"
	// signatureChallenge is the WWW-Authenticate challenge of a 401 from a signed route
	// (RFC 9110 §11.6.1): the scheme and the header that carries the signature.
	signatureChallenge = `Pvebill-HMAC-SHA256 realm="pvebill", header="` + HeaderSignature + `", version="v1"`
	// signatureWindow is how far a request's timestamp may be from the server's clock.
	signatureWindow = 300 * time.Second
)

// APIClient is an authenticated API client.
type APIClient struct {
	ID     string
	secret []byte
	scopes map[string]bool
	// macs holds HMAC-SHA256 states keyed with secret; Reset brings one back to its keyed
	// state, so a check does not derive the key pads again.
	macs sync.Pool
}

func newClient(id string, secret []byte) *APIClient {
	cl := &APIClient{ID: id, secret: secret, scopes: map[string]bool{}}
	cl.macs.New = func() any { return &keyedMAC{mac: hmac.New(sha256.New, cl.secret)} }
	return cl
}

// keyedMAC is a pooled HMAC state with the scratch space of one check.
type keyedMAC struct {
	mac  hash.Hash
	buf  []byte
	sum  [sha256.Size]byte
	want [3 + 2*sha256.Size]byte
}

// unknownClient signs for keys that name no client, so that they cost what a known client
// costs.
var unknownClient = newClient("", []byte("\x00unknown-client-dummy-secret"))

// HasScope reports whether the client holds a scope.
func (cl *APIClient) HasScope(s string) bool { return cl.scopes[s] }

// APIClients is the config-defined set of API clients.
type APIClients map[string]*APIClient

// NewClients builds the client table from the config.
func NewClients(cfg []config.Client) APIClients {
	out := APIClients{}
	for _, c := range cfg {
		cl := newClient(c.ID, []byte(c.Secret))
		for _, s := range c.Scopes {
			cl.scopes[s] = true
		}
		out[c.ID] = cl
	}
	return out
}

// SigningPrefix is what a v1 signature covers before the raw body: timestamp "\n" METHOD "\n"
// request URI with query, exactly as sent, "\n". The body follows byte for byte, so a gateway
// that re-serialises the JSON or re-encodes the query breaks the signature.
func SigningPrefix(timestamp, method, requestURI string) string {
	return timestamp + "\n" + method + "\n" + requestURI + "\n"
}

// Sign computes the v1 signature of a request: hex HMAC-SHA256(secret, SigningPrefix and the
// raw body).
func Sign(secret []byte, timestamp, method, requestURI string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(SigningPrefix(timestamp, method, requestURI)))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a signed request against the client table at time now. It returns the client
// or a signature_invalid / signature_expired problem. Unknown clients and wrong signatures are
// indistinguishable to the caller; the comparison is constant-time.
func (cs APIClients) Verify(key, timestamp, signature, method, requestURI string, body []byte, now time.Time) (*APIClient, error) {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if key == "" || signature == "" || err != nil || len(timestamp) > 12 {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureInvalid)
	}
	cl, ok := cs[key]
	signer := unknownClient
	if ok {
		signer = cl
	}
	match := signer.signatureMatches(timestamp, method, requestURI, body, strings.TrimSpace(signature))
	if !ok || !match {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureInvalid)
	}
	skew := now.Sub(time.Unix(ts, 0))
	if skew > signatureWindow || skew < -signatureWindow {
		return nil, i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureExpired)
	}
	return cl, nil
}

// signatureMatches reports whether signature is the v1 signature of the request (what Sign
// returns), comparing in constant time.
func (cl *APIClient) signatureMatches(timestamp, method, requestURI string, body []byte, signature string) bool {
	k := cl.macs.Get().(*keyedMAC)
	defer cl.macs.Put(k)
	k.mac.Reset()
	b := append(k.buf[:0], timestamp...)
	b = append(b, '\n')
	b = append(b, method...)
	b = append(b, '\n')
	b = append(b, requestURI...)
	b = append(b, '\n')
	k.mac.Write(b)
	k.mac.Write(body)
	if cap(b) <= 4096 {
		k.buf = b
	}
	want := &k.want
	copy(want[:], "v1=")
	hex.Encode(want[3:], k.mac.Sum(k.sum[:0]))
	if len(signature) != len(want) {
		return false
	}
	var diff byte
	for i := range want {
		diff |= want[i] ^ signature[i]
	}
	return subtle.ConstantTimeByteEq(diff, 0) == 1
}

func (s *Server) authMiddleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		cl, err := s.clients.Verify(c.GetHeader(HeaderKey), c.GetHeader(HeaderTimestamp), c.GetHeader(HeaderSignature),
			c.Request.Method, c.Request.URL.RequestURI(), rawBody(c), s.now())
		if err != nil {
			c.Header("WWW-Authenticate", signatureChallenge)
			writeError(c, s.log, err)
			return
		}
		if err := s.claimSignature(c, cl); err != nil {
			writeError(c, s.log, err)
			return
		}
		state(c).client = cl
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

func client(c *gin.Context) *APIClient { return state(c).client }
