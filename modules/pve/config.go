package pve

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Production defaults for the zero values of [Config].
const (
	DefaultTimeout             = 60 * time.Second
	DefaultMaxRetries          = 3
	DefaultRetryBaseDelay      = 250 * time.Millisecond
	DefaultRetryMaxDelay       = 5 * time.Second
	DefaultTaskPollInterval    = 100 * time.Millisecond
	DefaultTaskPollMaxInterval = 2 * time.Second
	// DefaultTaskPollFactor grows the poll interval after each poll. With a
	// 100 ms start and a 2 s ceiling, a 10 s task is seen finished on the 9th
	// poll (a factor of 1.5 would need 11).
	DefaultTaskPollFactor = 2.0
	// DefaultConsoleTicketRenew renews the console user's ticket a quarter of an hour before
	// its two hours end.
	DefaultConsoleTicketRenew = 105 * time.Minute
)

// APIBasePath is the JSON API root every request path is appended to.
const APIBasePath = "/api2/json"

// Config is one Proxmox VE cluster endpoint. Zero values of the tuning fields
// mean the production defaults above.
type Config struct {
	// Cluster names the cluster in metrics labels.
	Cluster string
	// URL is the API endpoint, e.g. https://pve1.example.net:8006 (a trailing
	// /api2/json is accepted). http:// is accepted for the simulator.
	URL string
	// TokenID is the full token id, user@realm!tokenname.
	TokenID string
	// TokenSecret is the token's UUID secret. It never appears in errors,
	// logs or String().
	TokenSecret string `json:"-"`
	// Fingerprint pins the SHA-256 fingerprint of the server's leaf
	// certificate, in Proxmox's AA:BB:...:FF form; several may be given,
	// separated by commas (certificate rotation). With a pin, the certificate
	// is trusted by the pin alone (Proxmox nodes use a self-signed cluster CA).
	Fingerprint string
	// ConsoleUser is the Proxmox user (user@realm, not a token) whose ticket opens consoles,
	// holding only VM.Console (docs/proxmox.md §14); empty: no consoles. ConsolePassword is its
	// password, a secret like TokenSecret. ConsoleTicketRenew is the age at which its ticket is
	// renewed (default DefaultConsoleTicketRenew, before Proxmox's two hours run out).
	ConsoleUser        string
	ConsolePassword    string `json:"-"`
	ConsoleTicketRenew time.Duration
	// InsecureSkipVerify disables TLS verification. Only for tests and labs.
	InsecureSkipVerify bool
	// Tunnel, when set, carries every request to an agent that holds the cluster's credentials
	// and forwards the call to Proxmox (design.md, "The agent"): URL, the token, the console
	// user and the TLS settings are then the agent's and must be left empty here; the client
	// adds no credential to any request.
	Tunnel http.RoundTripper
	// Timeout bounds each HTTP attempt (default 60 s). The caller's context
	// bounds the whole call, retries included.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt for
	// transient failures (0: default 3; negative: no retries).
	MaxRetries int

	// RetryBaseDelay and RetryMaxDelay shape the jittered exponential
	// backoff between attempts (defaults 250 ms and 5 s).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// TaskPollInterval, TaskPollMaxInterval and TaskPollFactor shape how Wait
	// polls a task of a type it has not yet seen end: the first poll after
	// TaskPollInterval, each following interval TaskPollFactor times longer,
	// up to TaskPollMaxInterval (defaults 100 ms, 2 s, ×2). Once tasks of the
	// type have been seen ending, Wait polls densely in that span and, before
	// it, every quarter of the expected time or every TaskPollMaxInterval,
	// whichever is longer (taskpoll.go).
	TaskPollInterval    time.Duration
	TaskPollMaxInterval time.Duration
	TaskPollFactor      float64
}

const redacted = "[redacted]"

// String renders the config with the token secret redacted.
func (c Config) String() string {
	secret, consolePassword := "", ""
	if c.TokenSecret != "" {
		secret = redacted
	}
	if c.ConsolePassword != "" {
		consolePassword = redacted
	}
	return fmt.Sprintf("pve.Config{Cluster:%q URL:%q TokenID:%q TokenSecret:%q ConsoleUser:%q ConsolePassword:%q Fingerprint:%q InsecureSkipVerify:%t Timeout:%s MaxRetries:%d}",
		c.Cluster, c.URL, c.TokenID, secret, c.ConsoleUser, consolePassword, c.Fingerprint, c.InsecureSkipVerify, c.Timeout, c.MaxRetries)
}

// GoString is String, so %#v does not print the secret either.
func (c Config) GoString() string { return c.String() }

// LogValue keeps the secret out of structured logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("cluster", c.Cluster),
		slog.String("url", c.URL),
		slog.String("token_id", c.TokenID),
		slog.String("console_user", c.ConsoleUser),
		slog.Bool("fingerprint_pinned", c.Fingerprint != ""),
		slog.Bool("insecure_skip_verify", c.InsecureSkipVerify),
	)
}

// agentBase is the base URL of requests sent through an agent's tunnel: the agent replaces it
// with its own Proxmox URL.
const agentBase = "https://proxmox.agent.invalid"

// validate checks the config and returns the base URL.
func (c Config) validate() (*url.URL, error) {
	if c.Tunnel != nil {
		return c.validateTunnel()
	}
	u, err := c.baseURL()
	if err != nil {
		return nil, err
	}
	if err := c.validateToken(); err != nil {
		return nil, err
	}
	if err := c.validateConsole(); err != nil {
		return nil, err
	}
	if c.Timeout < 0 || c.ConsoleTicketRenew < 0 || c.RetryBaseDelay < 0 || c.RetryMaxDelay < 0 ||
		c.TaskPollInterval < 0 || c.TaskPollMaxInterval < 0 || c.TaskPollFactor < 0 {
		return nil, errors.New("pve: config: durations and factors must not be negative")
	}
	if c.TaskPollFactor != 0 && c.TaskPollFactor < 1 {
		return nil, errors.New("pve: config: task poll factor must be at least 1")
	}
	return u, nil
}

// validateTunnel checks that a cluster reached through an agent carries no Proxmox endpoint or
// credential of its own.
func (c Config) validateTunnel() (*url.URL, error) {
	if c.URL != "" || c.TokenID != "" || c.TokenSecret != "" || c.ConsoleUser != "" || c.ConsolePassword != "" ||
		c.Fingerprint != "" || c.InsecureSkipVerify {
		return nil, errors.New("pve: config: a cluster reached through an agent takes no URL, token, console user or TLS setting")
	}
	return url.Parse(agentBase)
}

// baseURL checks the URL and returns it without the API base path or a trailing slash.
func (c Config) baseURL() (*url.URL, error) {
	if c.URL == "" {
		return nil, errors.New("pve: config: URL is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("pve: config: URL %q: %w", c.URL, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("pve: config: URL %q: scheme must be https or http", c.URL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("pve: config: URL %q has no host", c.URL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("pve: config: URL %q must not carry credentials, a query or a fragment", c.URL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), APIBasePath)
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// validateToken checks the API token id and secret.
func (c Config) validateToken() error {
	user, name, ok := strings.Cut(c.TokenID, "!")
	if !ok || name == "" || !strings.Contains(user, "@") {
		return fmt.Errorf("pve: config: token id %q must look like user@realm!tokenname", c.TokenID)
	}
	if c.TokenSecret == "" {
		return errors.New("pve: config: token secret is required")
	}
	// Proxmox splits the header value on its last '=' into id and secret.
	if strings.ContainsAny(c.TokenID, "\r\n\t =") {
		return fmt.Errorf("pve: config: token id %q contains forbidden characters", c.TokenID)
	}
	if strings.ContainsAny(c.TokenSecret, "\r\n\t =") {
		return errors.New("pve: config: token secret contains forbidden characters")
	}
	return nil
}

// validateConsole checks the console user: a real user (tokens cannot open consoles) with a
// password, or neither.
func (c Config) validateConsole() error {
	if c.ConsoleUser == "" {
		if c.ConsolePassword != "" {
			return errors.New("pve: config: console password given without a console user")
		}
		return nil
	}
	user, realm, ok := strings.Cut(c.ConsoleUser, "@")
	if !ok || user == "" || realm == "" || strings.ContainsAny(c.ConsoleUser, "!\r\n\t :") {
		return fmt.Errorf("pve: config: console user %q must look like user@realm (not a token)", c.ConsoleUser)
	}
	if c.ConsolePassword == "" {
		return errors.New("pve: config: console password is required with a console user")
	}
	return nil
}

// parseFingerprints parses "AA:BB:..,CC:DD:.." into SHA-256 digests.
func parseFingerprints(s string) ([][sha256.Size]byte, error) {
	var out [][sha256.Size]byte
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(part, ":", ""))
		if err != nil || len(raw) != sha256.Size || len(part) != sha256.Size*3-1 {
			return nil, fmt.Errorf("pve: config: fingerprint %q is not a SHA-256 fingerprint in AA:BB:..:FF form", part)
		}
		for i := 2; i < len(part); i += 3 {
			if part[i] != ':' {
				return nil, fmt.Errorf("pve: config: fingerprint %q is not a SHA-256 fingerprint in AA:BB:..:FF form", part)
			}
		}
		var d [sha256.Size]byte
		copy(d[:], raw)
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, errors.New("pve: config: fingerprint list is empty")
	}
	return out, nil
}

// formatFingerprint renders a digest the way Proxmox does (AA:BB:...).
func formatFingerprint(d [sha256.Size]byte) string {
	var b strings.Builder
	for i, x := range d {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", x)
	}
	return b.String()
}

type pinError struct{ got string }

func (e *pinError) Error() string {
	return "pve: server certificate fingerprint " + e.got + " matches no pinned fingerprint"
}

func (e *pinError) Unwrap() error { return ErrTLS }

// tlsConfig builds the client TLS settings: system verification by default,
// the pinned leaf fingerprints when given, no verification only on request.
func (c Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if strings.TrimSpace(c.Fingerprint) != "" {
		pins, err := parseFingerprints(c.Fingerprint)
		if err != nil {
			return nil, err
		}
		// Chain verification is replaced by the pin: the certificate is
		// signed by the cluster's own CA, which no system store trusts.
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return &pinError{got: "(none)"}
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			for _, p := range pins {
				if p == sum {
					return nil
				}
			}
			return &pinError{got: formatFingerprint(sum)}
		}
		return tc, nil
	}
	tc.InsecureSkipVerify = c.InsecureSkipVerify
	return tc, nil
}
