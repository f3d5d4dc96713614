package pve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Client talks to one Proxmox VE cluster with an API token. It is safe for
// concurrent use; all requests share one http.Transport.
type Client struct {
	cluster string
	base    *url.URL
	http    *http.Client
	auth    string
	secret  string
	// tunnel: requests go through an agent, which adds the credentials (Config.Tunnel).
	tunnel  bool
	metrics *Metrics
	// console is the console user's login (console.go).
	console consoleLogin

	timeout    time.Duration
	maxRetries int
	retryBase  time.Duration
	retryMax   time.Duration

	pollInterval time.Duration
	pollMax      time.Duration
	pollFactor   float64
	durations    taskDurations
}

// New validates cfg and returns a client. m may be nil (no metrics).
func New(cfg Config, m *Metrics) (*Client, error) {
	base, err := cfg.validate()
	var tc *tls.Config
	if err == nil && cfg.Tunnel == nil {
		tc, err = cfg.tlsConfig()
	}
	if err != nil {
		// Whatever field was malformed, the secret stays out of the text.
		return nil, errors.New(redactSecret(redactSecret(err.Error(), cfg.TokenSecret), cfg.ConsolePassword))
	}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	var rt http.RoundTripper = tr
	if cfg.Tunnel != nil {
		rt = cfg.Tunnel
	}
	c := &Client{
		cluster: cfg.Cluster,
		base:    base,
		tunnel:  cfg.Tunnel != nil,
		http: &http.Client{
			Transport: rt,
			// The API never redirects; following one would send the
			// request somewhere we did not configure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		auth:         "PVEAPIToken=" + cfg.TokenID + "=" + cfg.TokenSecret,
		secret:       cfg.TokenSecret,
		metrics:      m,
		timeout:      orDefault(cfg.Timeout, DefaultTimeout),
		maxRetries:   cfg.MaxRetries,
		retryBase:    orDefault(cfg.RetryBaseDelay, DefaultRetryBaseDelay),
		retryMax:     orDefault(cfg.RetryMaxDelay, DefaultRetryMaxDelay),
		pollInterval: orDefault(cfg.TaskPollInterval, DefaultTaskPollInterval),
		pollMax:      orDefault(cfg.TaskPollMaxInterval, DefaultTaskPollMaxInterval),
		pollFactor:   cfg.TaskPollFactor,
		console:      newConsoleLogin(cfg),
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.pollFactor == 0 {
		c.pollFactor = DefaultTaskPollFactor
	}
	if c.pollMax < c.pollInterval {
		c.pollMax = c.pollInterval
	}
	if c.retryMax < c.retryBase {
		c.retryMax = c.retryBase
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// envelope is Proxmox's response body: {"data": ...} on success, plus
// "message" and "errors" on failure, plus "total" on paged lists.
type envelope struct {
	Data    json.RawMessage            `json:"data"`
	Total   *Int                       `json:"total"`
	Message string                     `json:"message"`
	Errors  map[string]json.RawMessage `json:"errors"`
}

// DoRequest is the one transport method. It sends method path (relative to
// /api2/json, e.g. "/nodes/pve1/lxc/5001/config") with params in the query
// (GET, DELETE) or as an application/x-www-form-urlencoded body (POST, PUT),
// and decodes the response's "data" into out (out may be nil).
//
// Transient failures are retried with jittered exponential backoff, up to
// MaxRetries times: 502, 503 and 595 always; 504, 596, 597 and network errors
// after the request was sent only for GET; a request that never left (refused
// connection, failed dial) for every method. A POST, PUT or DELETE that failed
// after it was sent returns an error matching both [ErrTransient] and
// [ErrMaybeApplied]: read back before retrying. 4xx and 500 are never retried.
// Every failure is an [*APIError] sorted into a kind, or the context's error
// when ctx ended first.
func (c *Client) DoRequest(ctx context.Context, method, path string, params url.Values, out any) error {
	env, err := c.do(ctx, method, path, params)
	if err != nil {
		return err
	}
	return c.decodeData(method, path, env, out)
}

func (c *Client) decodeData(method, path string, env *envelope, out any) error {
	if out == nil || len(env.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		// A write that Proxmox answered with 2xx was carried out even if the
		// answer is unreadable.
		return &APIError{Method: method, Path: path, Status: 200, Kind: ErrUnexpected,
			Message: c.redact("decode data: " + err.Error()), MaybeApplied: method != http.MethodGet}
	}
	return nil
}

// do runs the attempts and returns the decoded envelope of a 2xx answer.
func (c *Client) do(ctx context.Context, method, path string, params url.Values) (*envelope, error) {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		return nil, fmt.Errorf("pve: method %q is not used by the Proxmox API", method)
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("pve: path %q must start with /", path)
	}
	for attempt := 1; ; attempt++ {
		if err := c.waitTunnel(ctx); err != nil {
			return nil, fmt.Errorf("pve: %s %s: waiting for the cluster's agent: %w", method, path, err)
		}
		env, apiErr, retryAfter := c.once(ctx, method, path, params)
		if apiErr == nil {
			return env, nil
		}
		apiErr.Attempts = attempt
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pve: %s %s: %w; last failure: %w", method, path, ctx.Err(), apiErr.APIError)
		}
		if !apiErr.retryable || attempt > c.maxRetries {
			return nil, apiErr.APIError
		}
		wait := c.backoff(attempt)
		if retryAfter > wait && retryAfter <= c.retryMax {
			wait = retryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("pve: %s %s: %w; last failure: %w", method, path, ctx.Err(), apiErr.APIError)
		case <-t.C:
		}
	}
}

// backoff returns the wait before attempt+1: base·2^(attempt-1) capped at
// retryMax, of which the upper half is random (so concurrent callers spread).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retryBase
	for i := 1; i < attempt && d < c.retryMax; i++ {
		d *= 2
	}
	d = min(d, c.retryMax)
	half := d / 2
	return half + rand.N(half+1)
}

// attemptError is an APIError plus whether it may be retried.
type attemptError struct {
	*APIError
	retryable bool
}

// once sends one attempt.
func (c *Client) once(ctx context.Context, method, path string, params url.Values) (*envelope, *attemptError, time.Duration) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	if err := c.checkRoute(method, path); err != nil {
		return nil, c.fail(method, path, 0, err.Error(), nil, ErrNotAllowed, false, false), 0
	}
	u := c.endpoint(path)
	var body io.Reader
	encoded := params.Encode()
	if method == http.MethodGet || method == http.MethodDelete {
		u.RawQuery = encoded
	} else {
		body = strings.NewReader(encoded)
	}
	// wrote tells a request that never left (safe to send again) from one
	// that may have reached Proxmox.
	var wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	req, err := http.NewRequestWithContext(actx, method, u.String(), body)
	if err != nil {
		return nil, c.fail(method, path, 0, "build request: "+err.Error(), nil, ErrUnexpected, false, false), 0
	}
	c.authorize(ctx, req)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.metrics.observe(c.cluster, path, 0, time.Since(start))
		return nil, c.networkError(method, path, err, sendState(wrote.Load())), 0
	}
	defer resp.Body.Close()
	limit := bodyLimit(path)
	raw, over, readErr := readBody(resp.Body, limit)
	c.metrics.observe(c.cluster, path, resp.StatusCode, time.Since(start))
	if reason := resp.Header.Get(HeaderAgentRefused); reason != "" && c.tunnel {
		return nil, c.fail(method, path, resp.StatusCode, "the agent refused the call ("+reason+")", nil, ErrNotAllowed,
			false, false), 0
	}
	if over {
		return nil, c.tooLarge(method, path, resp.StatusCode, limit), 0
	}
	if readErr != nil && resp.StatusCode/100 == 2 {
		return nil, c.networkError(method, path, readErr, sent), 0
	}

	var env envelope
	jsonErr := json.Unmarshal(raw, &env)
	if resp.StatusCode/100 == 2 {
		if jsonErr != nil {
			return nil, c.fail(method, path, resp.StatusCode, "decode response: "+jsonErr.Error(), nil, ErrUnexpected,
				false, method != http.MethodGet), 0
		}
		return &env, nil, 0
	}

	return nil, c.failedAnswer(method, path, resp, &env), retryAfter(resp)
}

// failedAnswer sorts a non-2xx answer: its message, kind, and whether it may be retried.
func (c *Client) failedAnswer(method, path string, resp *http.Response, env *envelope) *attemptError {
	msg := strings.TrimSpace(env.Message)
	if msg == "" {
		// Proxmox repeats the first line of the message as the reason phrase.
		msg = strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
		if r := resp.Header.Get(HeaderAgentReason); r != "" && c.tunnel {
			msg = r
		}
	}
	errs := flattenErrors(env.Errors)
	kind := classify(resp.StatusCode, msg, errs)
	retryable, maybeApplied := false, false
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, 595:
		retryable = true
	case http.StatusGatewayTimeout, 596, 597:
		// The hop in front gave up while the work may go on behind it.
		retryable = method == http.MethodGet
		maybeApplied = method != http.MethodGet
	}
	return c.fail(method, path, resp.StatusCode, msg, errs, kind, retryable, maybeApplied)
}

// retryAfter is the answer's Retry-After in seconds, or 0.
func retryAfter(resp *http.Response) time.Duration {
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs > 0 {
			return time.Duration(secs) * time.Second
		}
	}
	return 0
}

// sendState is whether a failed request had been written to the connection.
type sendState bool

const (
	notSent sendState = false // never written: Proxmox cannot have seen it
	sent    sendState = true  // written: Proxmox may have acted on it
)

// networkError sorts a failed round trip. A request that was never written
// may always be retried; one that was written only when it is a GET.
func (c *Client) networkError(method, path string, err error, wrote sendState) *attemptError {
	msg := err.Error()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		msg = uerr.Err.Error()
	}
	if isTLSError(err) {
		return c.fail(method, path, 0, msg, nil, ErrTLS, false, false)
	}
	if wrote == sent && method != http.MethodGet {
		return c.fail(method, path, 0, msg, nil, ErrTransient, false, true)
	}
	return c.fail(method, path, 0, msg, nil, ErrTransient, true, false)
}

func isTLSError(err error) bool {
	var (
		verr  *tls.CertificateVerificationError
		uaerr x509.UnknownAuthorityError
		herr  x509.HostnameError
		cierr x509.CertificateInvalidError
		rherr tls.RecordHeaderError
	)
	return errors.Is(err, ErrTLS) || errors.As(err, &verr) || errors.As(err, &uaerr) ||
		errors.As(err, &herr) || errors.As(err, &cierr) || errors.As(err, &rherr)
}

func (c *Client) fail(method, path string, status int, msg string, errs map[string]string, kind error, retryable, maybeApplied bool) *attemptError {
	for k, v := range errs {
		errs[k] = c.redact(v)
	}
	return &attemptError{
		APIError: &APIError{
			Method:       method,
			Path:         c.redact(path),
			Status:       status,
			Message:      c.redact(msg),
			Errors:       errs,
			Kind:         kind,
			MaybeApplied: maybeApplied,
		},
		retryable: retryable,
	}
}

// redact removes the token secret, the console password and the console ticket (plain or
// URL-escaped) from s.
func (c *Client) redact(s string) string {
	return c.console.redact(redactSecret(s, c.secret))
}

func redactSecret(s, secret string) string {
	if secret == "" {
		return s
	}
	s = strings.ReplaceAll(s, secret, redacted)
	if esc := url.QueryEscape(secret); esc != secret {
		s = strings.ReplaceAll(s, esc, redacted)
	}
	return s
}

// flattenErrors turns Proxmox's "errors" object into strings.
func flattenErrors(in map[string]json.RawMessage) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, raw := range in {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			out[k] = strings.TrimSpace(s)
			continue
		}
		out[k] = strings.TrimSpace(string(raw))
	}
	return out
}

// endpoint is the URL of an API path. An escaped segment (a volume id's "/" as %2F) stays one
// segment on the wire.
func (c *Client) endpoint(path string) url.URL {
	u := *c.base
	u.Path = c.base.Path + APIBasePath + path
	if strings.Contains(path, "%") {
		if unescaped, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = c.base.Path+APIBasePath+unescaped, c.base.EscapedPath()+APIBasePath+path
		}
	}
	return u
}
