package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// Kind is what a console shows: a container's terminal or a VM's screen.
type Kind string

// The console kinds (docs/api.md, Console).
const (
	KindTerminal Kind = "terminal"
	KindVNC      Kind = "vnc"
)

// TokenTTL is how long a console URL may wait before it is opened (R41).
const TokenTTL = 60 * time.Second

// Grant is what a console token says: which service (by its internal id) of which client, what
// kind of console, until when it may be opened, and the random nonce whose first claim is the
// token's single use.
type Grant struct {
	ServiceRef int64
	ClientID   string
	Kind       Kind
	Expires    time.Time
	Nonce      [nonceLen]byte
}

const (
	tokenVersion = 1
	nonceLen     = 16
	macLen       = sha256.Size
	// fixed part: version, kind, service ref, expiry, nonce, client id length.
	tokenFixed = 1 + 1 + 8 + 8 + nonceLen + 1
)

var kindCodes = map[Kind]byte{KindTerminal: 1, KindVNC: 2}

// ErrBadToken is a token that is malformed, of another key, or names an unknown kind.
var ErrBadToken = errors.New("console token is not valid")

// Tokens issues and reads console tokens. A token is self-contained: the grant's fields and an
// HMAC-SHA256 over them keyed with console.secret, base64url-encoded. Nothing of it is stored;
// only its nonce is written when it is opened (models.ClaimConsole), so a token works on any
// replica that shares the secret and the database holds nothing that opens a console.
type Tokens struct {
	key []byte
}

// NewTokens returns the token codec for a secret (console.secret). The MAC key is derived from
// it, so the same secret used elsewhere yields an unrelated key.
func NewTokens(secret string) *Tokens {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("pvebill console token v1"))
	return &Tokens{key: m.Sum(nil)}
}

// Issue fills g's nonce from crypto/rand and returns its token.
func (t *Tokens) Issue(g *Grant) (string, error) {
	if _, err := rand.Read(g.Nonce[:]); err != nil {
		return "", err
	}
	code, ok := kindCodes[g.Kind]
	if !ok || len(g.ClientID) == 0 || len(g.ClientID) > 255 {
		return "", ErrBadToken
	}
	buf := make([]byte, 0, tokenFixed+len(g.ClientID)+macLen)
	buf = append(buf, tokenVersion, code)
	buf = binary.BigEndian.AppendUint64(buf, uint64(g.ServiceRef))
	buf = binary.BigEndian.AppendUint64(buf, uint64(g.Expires.Unix()))
	buf = append(buf, g.Nonce[:]...)
	buf = append(buf, byte(len(g.ClientID)))
	buf = append(buf, g.ClientID...)
	buf = append(buf, t.mac(buf)...)
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// Parse checks a token's MAC and returns its grant. It does not look at the expiry or the
// claim: that is Service's job, which answers each case with its own page.
func (t *Tokens) Parse(token string) (Grant, error) {
	var g Grant
	if len(token) > 512 {
		return g, ErrBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < tokenFixed+1+macLen || raw[0] != tokenVersion {
		return g, ErrBadToken
	}
	body, sum := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(sum, t.mac(body)) {
		return g, ErrBadToken
	}
	if int(body[tokenFixed-1]) != len(body)-tokenFixed {
		return g, ErrBadToken
	}
	for k, c := range kindCodes {
		if c == body[1] {
			g.Kind = k
		}
	}
	if g.Kind == "" {
		return g, ErrBadToken
	}
	g.ServiceRef = int64(binary.BigEndian.Uint64(body[2:10]))
	g.Expires = time.Unix(int64(binary.BigEndian.Uint64(body[10:18])), 0)
	copy(g.Nonce[:], body[18:18+nonceLen])
	g.ClientID = string(body[tokenFixed:])
	return g, nil
}

func (t *Tokens) mac(b []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write(b)
	return m.Sum(nil)
}
