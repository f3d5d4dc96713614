package agent

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"pvebill/modules/pve"
)

// Backoff between connection attempts: full jitter over base·2^n capped at max, reset once a
// tunnel stayed up for resetAfter; the agent never gives up.
const (
	backoffBase       = time.Second
	backoffMax        = 30 * time.Second
	backoffResetAfter = time.Minute
	// drainTimeout bounds the calls in flight at the agent's shutdown.
	drainTimeout = 30 * time.Second
	// maxStreams caps the concurrent calls of one tunnel.
	maxStreams = 250
)

// Options tune an agent (tests shorten the timers).
type Options struct {
	Log      *slog.Logger
	Liveness Liveness
	// BackoffBase and BackoffMax default to 1 s and 30 s.
	BackoffBase, BackoffMax time.Duration
	// DialContext opens the TCP connection to pvebill (default: a net.Dialer); tests put a
	// fault-injecting proxy or a killable connection here.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Agent runs next to Proxmox: it dials pvebill, proves itself, and serves pvebill's calls over
// the tunnel with its own credentials.
type Agent struct {
	cfg    Config
	key    ed25519.PrivateKey
	pve    *pve.Client
	log    *slog.Logger
	server *url.URL
	dialer *http.Client
	o      Options

	mu      sync.Mutex
	connect time.Time // when the current tunnel came up; zero when none
	// served and refused count the calls forwarded to Proxmox and the calls refused.
	served, refused atomic.Int64
	// instance names this process in the handshake.
	instance string
}

// Served is the number of calls the agent forwarded to Proxmox; Refused of calls it refused.
func (a *Agent) Served() int64 { return a.served.Load() }

// Refused is the number of calls the agent refused.
func (a *Agent) Refused() int64 { return a.refused.Load() }

// New builds an agent from a validated config; it loads the private key.
func New(cfg Config, o Options) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := LoadPrivateKey(cfg.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("agent config: private_key_file: %w", err)
	}
	client, err := pve.New(cfg.PVE(), nil)
	if err != nil {
		return nil, err
	}
	u, _ := cfg.serverURL()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Liveness = o.Liveness.orDefault()
	if o.BackoffBase <= 0 {
		o.BackoffBase = backoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = backoffMax
	}
	if o.DialContext == nil {
		o.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}).DialContext
	}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: cfg.serverTLS(), DialContext: o.DialContext}
	return &Agent{cfg: cfg, key: key, pve: client, log: o.Log, server: u, dialer: &http.Client{Transport: tr}, o: o,
		instance: newInstance()}, nil
}

// PublicKey is the agent's public key as pvebill's config names it.
func (a *Agent) PublicKey() string { return FormatPublicKey(a.key.Public().(ed25519.PublicKey)) }

// Run keeps a tunnel to pvebill until ctx ends, reconnecting with backoff forever. At the end
// the calls in flight are given drainTimeout to finish.
func (a *Agent) Run(ctx context.Context) {
	attempt := 0
	for ctx.Err() == nil {
		up, err := a.connectOnce(ctx)
		if ctx.Err() != nil {
			break
		}
		attempt = afterTunnel(attempt, up)
		wait := fullJitter(a.o.BackoffBase, a.o.BackoffMax, attempt)
		attempt++
		a.log.Warn("agent tunnel down; reconnecting", "err", errText(err), "up_for", up.Round(time.Millisecond).String(),
			"retry_in", wait.Round(time.Millisecond).String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	a.log.Info("agent stopped")
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// afterTunnel is the backoff attempt after a tunnel that was up for up: a tunnel healthy for a
// minute starts the backoff again from its base.
func afterTunnel(attempt int, up time.Duration) int {
	if up >= backoffResetAfter {
		return 0
	}
	return attempt
}

// newInstance is a random name for this agent process.
func newInstance() string {
	b := make([]byte, 8)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

// fullJitter is a random wait in [0, min(max, base·2^attempt)).
func fullJitter(base, maxWait time.Duration, attempt int) time.Duration {
	d := base
	for i := 0; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	return rand.N(d) + 1
}

// Connected reports when the current tunnel came up (zero when none is up).
func (a *Agent) Connected() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.connect
}

// connectOnce dials pvebill, runs the handshake and serves the tunnel until it ends; it returns
// how long the tunnel was up.
func (a *Agent) connectOnce(ctx context.Context) (time.Duration, error) {
	ws, err := a.dial(ctx)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	a.mu.Lock()
	a.connect = start
	a.mu.Unlock()
	a.log.Info("agent connected", "server", a.server.Host, "cluster", a.cfg.Cluster)
	err = a.serve(ctx, ws)
	a.mu.Lock()
	a.connect = time.Time{}
	a.mu.Unlock()
	return time.Since(start), err
}

// dial opens the WebSocket and runs the agent's half of the handshake.
func (a *Agent) dial(ctx context.Context) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	u := *a.server
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	u.Path = u.Path + ConnectPath
	ws, _, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: a.dialer,
		Subprotocols: []string{Subprotocol}, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", a.server.Host, err)
	}
	var ch Challenge
	if err := readJSON(dctx, ws, &ch); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	hello := Sign(a.key, ch, a.cfg.Cluster, a.server.Host)
	hello.Instance = a.instance
	if err := writeJSON(dctx, ws, hello); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	var w Welcome
	if err := readJSON(dctx, ws, &w); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if !w.OK {
		_ = ws.CloseNow()
		return nil, &HandshakeError{Reason: w.Error, Detail: "pvebill refused this agent"}
	}
	return ws, nil
}

// serve runs the HTTP/2 server side of the tunnel until the connection ends or ctx ends; then
// the calls in flight get drainTimeout to finish.
func (a *Agent) serve(ctx context.Context, ws *websocket.Conn) error {
	nc := &notifyConn{Conn: websocket.NetConn(context.WithoutCancel(ctx), ws, websocket.MessageBinary),
		done: make(chan struct{})}
	srv := &http.Server{Handler: a, Protocols: h2cOnly(), HTTP2: a.o.Liveness.http2Config(maxStreams),
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)}
	l := &oneConnListener{conn: nc, done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case <-nc.done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	_ = srv.Close()
	_ = nc.Close()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// oneConnListener hands one connection to http.Server and then blocks until closed.
type oneConnListener struct {
	conn   net.Conn
	once   sync.Once
	served bool
	mu     sync.Mutex
	done   chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.served {
		l.served = true
		l.mu.Unlock()
		return l.conn, nil
	}
	l.mu.Unlock()
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// Check verifies the config end to end once: Proxmox answers with the agent's token, and
// pvebill accepts the agent's handshake.
func (a *Agent) Check(ctx context.Context) error {
	if _, err := a.pve.Nodes(ctx); err != nil {
		return fmt.Errorf("proxmox: %w", err)
	}
	ws, err := a.dial(ctx)
	if err != nil {
		return fmt.Errorf("pvebill: %w", err)
	}
	return ws.Close(websocket.StatusNormalClosure, "check done")
}
