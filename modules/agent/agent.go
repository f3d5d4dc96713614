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
	"strconv"
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
	connect time.Time // when the first tunnel came up; zero when none
	// held is the replica each tunnel (by slot) landed on; replicas the live replicas the last
	// welcome counted; more is closed (and replaced) when replicas changes.
	held     map[int]string
	replicas int
	more     chan struct{}
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
		instance: newInstance(), held: map[int]string{}, replicas: 1, more: make(chan struct{})}, nil
}

// PublicKey is the agent's public key as pvebill's config names it.
func (a *Agent) PublicKey() string { return FormatPublicKey(a.key.Public().(ed25519.PublicKey)) }

// Run keeps its tunnels to pvebill until ctx ends, reconnecting with backoff forever: the first
// always, each further one once the welcome counts enough live replicas (Config.Tunnels), each
// to a replica no earlier tunnel holds. At the end the calls in flight are given drainTimeout to
// finish.
func (a *Agent) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for slot := range a.cfg.tunnels() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.runSlot(ctx, slot)
		}()
	}
	wg.Wait()
	a.log.Info("agent stopped")
}

// runSlot keeps the slot's tunnel. A slot beyond the first waits until the live replicas
// outnumber it; one that lands on a replica an earlier slot holds lets go and dials again after
// a short random wait (the load balancer picks the replica).
func (a *Agent) runSlot(ctx context.Context, slot int) {
	attempt := 0
	for ctx.Err() == nil {
		if !a.waitSlot(ctx, slot) {
			return
		}
		up, err := a.connectOnce(ctx, slot)
		if errors.Is(err, errSameReplica) {
			if !sleepCtx(ctx, a.o.BackoffBase+rand.N(4*a.o.BackoffBase)) {
				return
			}
			continue
		}
		if ctx.Err() != nil {
			break
		}
		attempt = afterTunnel(attempt, up)
		wait := fullJitter(a.o.BackoffBase, a.o.BackoffMax, attempt)
		attempt++
		a.log.Warn("agent tunnel down; reconnecting", "err", errText(err), "up_for", up.Round(time.Millisecond).String(),
			"retry_in", wait.Round(time.Millisecond).String())
		if !sleepCtx(ctx, wait) {
			return
		}
	}
}

// errSameReplica: the tunnel landed on a replica an earlier slot holds.
var errSameReplica = errors.New("agent: landed on a replica another tunnel holds")

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitSlot waits until slot has a replica to go to (the live replicas outnumber it).
func (a *Agent) waitSlot(ctx context.Context, slot int) bool {
	for {
		a.mu.Lock()
		enough, more := a.replicas > slot, a.more
		a.mu.Unlock()
		if enough {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-more:
		}
	}
}

// landed records the welcome of slot's tunnel; false when an earlier slot holds that replica.
func (a *Agent) landed(slot int, w Welcome) bool {
	a.setReplicas(w.Replicas)
	a.mu.Lock()
	defer a.mu.Unlock()
	for other, replica := range a.held {
		if other < slot && replica == w.Replica && w.Replica != "" {
			return false
		}
	}
	a.held[slot] = w.Replica
	return true
}

// setReplicas records how many replicas live (from a welcome, or told over a tunnel): the
// slots that now have one to go to start.
func (a *Agent) setReplicas(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > 0 && n != a.replicas {
		a.replicas = n
		close(a.more)
		a.more = make(chan struct{})
	}
}

// ReplicasPath is the one call pvebill makes to the agent itself, over a tunnel: PUT with
// ?n=<live replicas>, so that the agent opens (or stops wanting) its further tunnels without
// waiting for a reconnect.
const ReplicasPath = "/_pvebill/replicas"

func (a *Agent) replicasTold(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 1 {
		http.Error(w, "n must be a positive number", http.StatusBadRequest)
		return
	}
	a.setReplicas(n)
	w.WriteHeader(http.StatusNoContent)
}

// Tunnels lists the replicas the agent's tunnels are up to, by slot.
func (a *Agent) Tunnels() map[int]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[int]string, len(a.held))
	for k, v := range a.held {
		out[k] = v
	}
	return out
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
func (a *Agent) connectOnce(ctx context.Context, slot int) (time.Duration, error) {
	ws, w, err := a.dial(ctx, a.slotInstance(slot))
	if err != nil {
		return 0, err
	}
	if !a.landed(slot, w) {
		_ = ws.Close(websocket.StatusNormalClosure, "another tunnel holds this replica")
		return 0, errSameReplica
	}
	start := time.Now()
	if slot == 0 {
		a.mu.Lock()
		a.connect = start
		a.mu.Unlock()
	}
	a.log.Info("agent connected", "server", a.server.Host, "cluster", a.cfg.Cluster, "replica", w.Replica, "tunnel", slot)
	err = a.serve(ctx, ws)
	a.mu.Lock()
	delete(a.held, slot)
	if slot == 0 {
		a.connect = time.Time{}
	}
	a.mu.Unlock()
	return time.Since(start), err
}

// slotInstance names a slot's tunnel in the handshake: a new tunnel of the same slot replaces
// its older one on the replica.
func (a *Agent) slotInstance(slot int) string {
	if slot == 0 {
		return a.instance
	}
	return a.instance + "-" + strconv.Itoa(slot)
}

// dial opens the WebSocket and runs the agent's half of the handshake.
func (a *Agent) dial(ctx context.Context, instance string) (*websocket.Conn, Welcome, error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	u := *a.server
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	u.Path = u.Path + ConnectPath
	ws, _, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: a.dialer,
		Subprotocols: []string{Subprotocol}, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, Welcome{}, fmt.Errorf("dial %s: %w", a.server.Host, err)
	}
	var ch Challenge
	if err := readJSON(dctx, ws, &ch); err != nil {
		_ = ws.CloseNow()
		return nil, Welcome{}, fmt.Errorf("handshake: %w", err)
	}
	hello := Sign(a.key, ch, a.cfg.Cluster, a.server.Host)
	hello.Instance = instance
	if err := writeJSON(dctx, ws, hello); err != nil {
		_ = ws.CloseNow()
		return nil, Welcome{}, fmt.Errorf("handshake: %w", err)
	}
	var w Welcome
	if err := readJSON(dctx, ws, &w); err != nil {
		_ = ws.CloseNow()
		return nil, Welcome{}, fmt.Errorf("handshake: %w", err)
	}
	if !w.OK {
		_ = ws.CloseNow()
		return nil, Welcome{}, &HandshakeError{Reason: w.Error, Detail: "pvebill refused this agent"}
	}
	return ws, w, nil
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
	ws, _, err := a.dial(ctx, a.instance+"-check")
	if err != nil {
		return fmt.Errorf("pvebill: %w", err)
	}
	return ws.Close(websocket.StatusNormalClosure, "check done")
}
