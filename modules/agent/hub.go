package agent

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Liveness is how both ends of a tunnel check it (design.md, "The agent"): a PING after
// SendPing without a frame, the tunnel dead when the answer has not come within PingTimeout
// (or a write stalls that long). A dead or half-open tunnel is noticed within
// SendPing+PingTimeout.
type Liveness struct {
	SendPing    time.Duration
	PingTimeout time.Duration
}

// DefaultLiveness is 5 s idle, then 10 s for the answer: noticed within 15 s, and a ping every
// 5 s keeps a load balancer's idle timer (60 s, 100 s) from dropping an idle tunnel.
var DefaultLiveness = Liveness{SendPing: 5 * time.Second, PingTimeout: 10 * time.Second}

func (l Liveness) orDefault() Liveness {
	if l.SendPing <= 0 {
		l.SendPing = DefaultLiveness.SendPing
	}
	if l.PingTimeout <= 0 {
		l.PingTimeout = DefaultLiveness.PingTimeout
	}
	return l
}

// silentAfter is how long a tunnel may read nothing before new calls avoid it: the idle time
// before a ping plus a second for its answer (a tenth of the ping's time-out when that is
// shorter). A healthy tunnel reads a ping's answer one round trip after SendPing of silence, so
// one silent longer is most likely cut; until its ping times out it still takes calls when no
// other tunnel will. (With half the ping's time-out, an agent killed behind a cut link left its
// dead tunnel taking half of the calls for 10 s after the new one connected, each waiting up
// to 15 s for the tunnel to be declared dead.)
func (l Liveness) silentAfter() time.Duration { return l.SendPing + min(l.PingTimeout/10, time.Second) }

func (l Liveness) http2Config(maxStreams int) *http.HTTP2Config {
	return &http.HTTP2Config{SendPingTimeout: l.SendPing, PingTimeout: l.PingTimeout, WriteByteTimeout: l.PingTimeout,
		MaxConcurrentStreams: maxStreams}
}

// HubOptions configure pvebill's side of the tunnels.
type HubOptions struct {
	// Keys are the agent clusters and their public keys.
	Keys map[string]ed25519.PublicKey
	Log  *slog.Logger
	// Metrics may be nil.
	Metrics *Metrics
	// Liveness defaults to DefaultLiveness.
	Liveness Liveness
	// HandshakeTimeout bounds the handshake (default 10 s).
	HandshakeTimeout time.Duration
	// Replica names this replica in the welcome.
	Replica string
	// MaxWait bounds how long an operation's call waits for an agent (default DefaultMaxWait):
	// then the operation fails proxmox_unavailable (temporary, nothing sent), so a cluster
	// whose agent stays away does not hold the workers other clusters need.
	MaxWait time.Duration
	// Peering forwards the calls of a cluster whose agent holds no tunnel here to a replica that
	// has one; nil: no forwarding (one replica).
	Peering *Peering
	// LiveReplicas counts the live replicas, told to each agent in the welcome so that it keeps
	// a tunnel to as many of them as it is configured to (nil: one).
	LiveReplicas func(ctx context.Context) (int, error)
}

// DefaultMaxWait is how long an operation's call waits for a cluster's agent.
const DefaultMaxWait = 2 * time.Minute

// Hub is pvebill's end of the agents' tunnels: it serves ConnectPath, verifies each agent and
// keeps its tunnel as an HTTP/2 client connection whose server is the agent (the roles
// reversed inside the WebSocket). Transport gives each agent cluster's Proxmox client its
// RoundTripper.
type Hub struct {
	o       HubOptions
	m       *Metrics
	mu      sync.Mutex
	tunnels map[string][]*tunnel
	closing bool
	next    atomic.Uint64
	// changed is closed (and replaced) when a tunnel is added: waiters look again.
	changed chan struct{}
	// waiting counts, per cluster, the calls in waitReady that found no agent.
	waiting map[string]int
	// peers forwards calls between replicas; nil without peering.
	peers *peers
}

// tunnel is one connected agent.
type tunnel struct {
	cluster     string
	instance    string
	remote      string
	connectedAt time.Time
	cc          *http.ClientConn
	done        chan struct{}
	// conn is the tunnel's connection: when it last read a frame.
	conn *notifyConn
	// superseded: a newer tunnel of the same agent came; no new call goes here.
	superseded atomic.Bool
}

// closeWhenIdle closes a superseded tunnel once it carries no call (its liveness check closes
// it sooner if it is dead).
func (h *Hub) closeWhenIdle(t *tunnel) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
			if t.cc.InFlight() == 0 {
				_ = t.cc.Close()
				return
			}
		}
	}
}

// Info is one connected agent as /readyz shows it.
type Info struct {
	ConnectedAt time.Time `json:"connected_at"`
	Remote      string    `json:"remote"`
}

// NewHub returns a hub for the configured agent clusters.
func NewHub(o HubOptions) *Hub {
	o.Liveness = o.Liveness.orDefault()
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := o.Metrics
	if m == nil {
		m = NewMetrics(nil)
	}
	for c := range o.Keys {
		m.init(c)
	}
	h := &Hub{o: o, m: m, tunnels: map[string][]*tunnel{}, changed: make(chan struct{}), waiting: map[string]int{}}
	if o.Peering != nil {
		h.peers = newPeers(*o.Peering)
	}
	return h
}

// Clusters lists the agent clusters, sorted.
func (h *Hub) Clusters() []string {
	out := make([]string, 0, len(h.o.Keys))
	for c := range h.o.Keys {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP accepts an agent: the WebSocket upgrade, the handshake, then the tunnel until it
// ends.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol},
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		h.refused(r, &HandshakeError{Reason: FailProtocol, Detail: err.Error()})
		return
	}
	hello, herr := h.handshake(r.Context(), ws, r)
	if herr != nil {
		code := handshakeRefusal
		if herr.Reason == FailShuttingDown {
			code = handshakeDraining
		}
		_ = ws.Close(code, herr.Reason)
		return
	}
	h.serveTunnel(r.Context(), ws, hello, r.RemoteAddr)
}

func (h *Hub) refused(r *http.Request, e *HandshakeError) {
	h.m.handshake.WithLabelValues(e.Reason).Inc()
	h.o.Log.Warn("agent handshake refused", "reason", e.Reason, "detail", e.Detail, "remote", r.RemoteAddr)
}

// handshake runs the challenge and returns the verified hello; a refusal is counted and
// logged before the agent is told.
func (h *Hub) handshake(ctx context.Context, ws *websocket.Conn, r *http.Request) (Hello, *HandshakeError) {
	ctx, cancel := context.WithTimeout(ctx, h.o.HandshakeTimeout)
	defer cancel()
	hello, herr := h.challenge(ctx, ws, r.Host)
	if herr != nil {
		h.refused(r, herr)
		_ = writeJSON(ctx, ws, Welcome{Error: herr.Reason})
		return Hello{}, herr
	}
	if err := writeJSON(ctx, ws, Welcome{OK: true, Replica: h.o.Replica, Replicas: h.liveReplicas(ctx)}); err != nil {
		herr = timeoutOr(ctx, err)
		h.refused(r, herr)
		return Hello{}, herr
	}
	return hello, nil
}

// challenge sends the nonce and verifies the answer.
func (h *Hub) challenge(ctx context.Context, ws *websocket.Conn, host string) (Hello, *HandshakeError) {
	if ws.Subprotocol() != Subprotocol {
		return Hello{}, &HandshakeError{Reason: FailProtocol, Detail: "subprotocol " + Subprotocol + " not negotiated"}
	}
	nonce, err := newNonce()
	if err != nil {
		return Hello{}, &HandshakeError{Reason: FailProtocol, Detail: err.Error()}
	}
	if err := writeJSON(ctx, ws, Challenge{Protocol: ProtocolVersion, Nonce: nonce}); err != nil {
		return Hello{}, timeoutOr(ctx, err)
	}
	var hello Hello
	if err := readJSON(ctx, ws, &hello); err != nil {
		return Hello{}, timeoutOr(ctx, err)
	}
	if herr := verify(h.o.Keys, nonce, hello, host); herr != nil {
		return Hello{}, herr
	}
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing {
		return Hello{}, &HandshakeError{Reason: FailShuttingDown, Detail: "this replica is shutting down"}
	}
	return hello, nil
}

// liveReplicas is the number of live replicas the welcome tells (at least 1).
func (h *Hub) liveReplicas(ctx context.Context) int {
	if h.o.LiveReplicas == nil {
		return 1
	}
	n, err := h.o.LiveReplicas(ctx)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func timeoutOr(ctx context.Context, err error) *HandshakeError {
	if ctx.Err() != nil {
		return &HandshakeError{Reason: FailTimeout, Detail: err.Error()}
	}
	return &HandshakeError{Reason: FailProtocol, Detail: err.Error()}
}

// serveTunnel runs an HTTP/2 client connection over the WebSocket and keeps it registered
// until it ends: the agent closed it, a ping went unanswered, or the hub closed it.
func (h *Hub) serveTunnel(ctx context.Context, ws *websocket.Conn, hello Hello, remote string) {
	cluster := hello.Cluster
	nc := &notifyConn{Conn: websocket.NetConn(ctx, ws, websocket.MessageBinary), done: make(chan struct{})}
	nc.lastRead.Store(time.Now().UnixNano())
	tr := &http.Transport{Protocols: h2cOnly(), HTTP2: h.o.Liveness.http2Config(0),
		DialContext: func(context.Context, string, string) (net.Conn, error) { return nc, nil }}
	cc, err := tr.NewClientConn(ctx, "http", "agent.invalid:80")
	if err != nil {
		_ = nc.Close()
		h.o.Log.Warn("agent tunnel failed to start", "cluster", cluster, "err", err)
		return
	}
	t := &tunnel{cluster: cluster, instance: hello.Instance, remote: remote, connectedAt: time.Now().UTC(), cc: cc,
		done: nc.done, conn: nc}
	h.add(t)
	h.o.Log.Info("agent connected", "cluster", cluster, "remote", remote)
	select {
	case <-nc.done:
	case <-ctx.Done():
	}
	_ = cc.Close()
	h.remove(t)
	h.o.Log.Info("agent disconnected", "cluster", cluster, "remote", remote,
		"connected_for", time.Since(t.connectedAt).Round(time.Millisecond).String())
}

func h2cOnly() *http.Protocols {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return p
}

// add registers a tunnel. An older tunnel of the same agent process is dead or dying (the
// agent keeps one at a time): it takes no new call and is closed once its calls are done.
func (h *Hub) add(t *tunnel) {
	h.mu.Lock()
	for _, old := range h.tunnels[t.cluster] {
		if t.instance != "" && old.instance == t.instance {
			old.superseded.Store(true)
			go h.closeWhenIdle(old)
		}
	}
	h.tunnels[t.cluster] = append(h.tunnels[t.cluster], t)
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	h.m.tunnels.WithLabelValues(t.cluster).Inc()
	h.m.connects.WithLabelValues(t.cluster).Inc()
	if h.peers != nil {
		h.peers.changed()
	}
}

func (h *Hub) remove(t *tunnel) {
	h.mu.Lock()
	ts := h.tunnels[t.cluster]
	for i, x := range ts {
		if x == t {
			h.tunnels[t.cluster] = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	h.mu.Unlock()
	h.m.tunnels.WithLabelValues(t.cluster).Dec()
	h.m.disconnects.WithLabelValues(t.cluster).Inc()
	if h.peers != nil {
		h.peers.changed()
	}
}

// Agents lists a cluster's connected agents, oldest first.
func (h *Hub) Agents(cluster string) []Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []Info{}
	for _, t := range h.tunnels[cluster] {
		if t.superseded.Load() {
			continue
		}
		out = append(out, Info{ConnectedAt: t.connectedAt, Remote: t.remote})
	}
	return out
}

// pick chooses a live tunnel of the cluster, spreading calls over several agents; nil when none
// is connected.
func (h *Hub) pick(cluster string) *tunnel {
	h.mu.Lock()
	ts := append([]*tunnel(nil), h.tunnels[cluster]...)
	h.mu.Unlock()
	n := uint64(len(ts))
	if n == 0 {
		return nil
	}
	start := h.next.Add(1)
	var busy, silent *tunnel
	for i := range n {
		t := ts[(start+i)%n]
		if t.cc.Err() != nil || t.superseded.Load() {
			continue
		}
		if t.silentFor() > h.o.Liveness.silentAfter() {
			// Nothing read for longer than a ping's round: probably cut without a FIN. It
			// takes a call only when no other tunnel will (its liveness check ends it soon).
			silent = t
			continue
		}
		if t.cc.Available() > 0 {
			return t
		}
		busy = t
	}
	if busy != nil {
		return busy
	}
	return silent
}

// silentFor is how long the tunnel has read nothing (a healthy one reads at least a ping's
// answer every SendPing).
func (t *tunnel) silentFor() time.Duration {
	if t.conn == nil {
		return 0
	}
	return time.Since(time.Unix(0, t.conn.lastRead.Load()))
}

// Waiting is how many calls wait for an agent of the cluster right now: an operation's calls
// (pve.WaitForTunnel) that found none connected. Tests read it to act once the cluster's
// absence has been felt instead of after a pause.
func (h *Hub) Waiting(cluster string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting[cluster]
}

// waitReady waits until the cluster has a live tunnel, ctx ends or MaxWait passes.
func (h *Hub) waitReady(ctx context.Context, cluster string) error {
	ctx, cancel := context.WithTimeout(ctx, h.o.MaxWait)
	defer cancel()
	counted := false
	defer func() {
		if counted {
			h.mu.Lock()
			h.waiting[cluster]--
			h.mu.Unlock()
		}
	}()
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if h.pick(cluster) != nil || (h.peers != nil && len(h.peers.routes(ctx, h, cluster)) > 0) {
			return nil
		}
		if !counted {
			counted = true
			h.mu.Lock()
			h.waiting[cluster]++
			h.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-time.After(time.Second): // a tunnel that died and was replaced without a new add
		}
	}
}

// Shutdown refuses new agents, lets the calls in flight finish until ctx ends, then closes
// every tunnel (the agents reconnect to another replica).
func (h *Hub) Shutdown(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closing = true
	var all []*tunnel
	for _, ts := range h.tunnels {
		all = append(all, ts...)
	}
	h.mu.Unlock()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, t := range all {
		for t.cc.InFlight() > 0 && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		_ = t.cc.Close()
	}
}

// notifyConn closes done when the connection is closed, by either side's HTTP/2 machinery.
type notifyConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
	// lastRead is when a read last returned bytes, in Unix nanoseconds.
	lastRead atomic.Int64
}

func (c *notifyConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}

// ErrNoAgent is a call to a cluster with no connected agent: nothing was sent.
var ErrNoAgent = errors.New("agent: no agent of the cluster is connected")
