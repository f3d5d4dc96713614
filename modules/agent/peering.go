package agent

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pvebill/modules/pve"
)

// Peering between replicas (design.md, "The agent"): an agent's tunnel lands on one replica; a
// replica without a tunnel to a cluster forwards each call one hop to a replica that has one,
// found in the route table every replica keeps in the database. The forwarded call is signed
// with the replicas' shared secret (HMAC-SHA256 over the replica, a time, a nonce, the method,
// the path and the body's digest); the receiving replica sends it only into a tunnel of its
// own, never on to a third replica.

// ForwardPath is the internal endpoint: ForwardPath/{cluster}/api2/json/….
const ForwardPath = "/agent/v1/forward"

// Headers of a forwarded call.
const (
	HeaderPeerReplica   = "Pvebill-Peer-Replica"
	HeaderPeerTime      = "Pvebill-Peer-Time"
	HeaderPeerNonce     = "Pvebill-Peer-Nonce"
	HeaderPeerSignature = "Pvebill-Peer-Signature"
	// HeaderForward on a 503 says the receiving replica had no tunnel either: nothing was sent
	// to Proxmox, so the call may be sent again.
	HeaderForward = "Pvebill-Agent-Forward"
)

// Refusal reasons of a forwarded call (a metric label).
const (
	PeerUnauthenticated = "unauthenticated"
	PeerStale           = "stale"
	PeerReplayed        = "replayed"
	PeerUnknownCluster  = "unknown_cluster"
)

// peerClockSkew is how far a forwarded call's time may be from this replica's; a nonce is
// remembered twice as long, so a replayed call is refused either way.
const peerClockSkew = 30 * time.Second

// RouteTable is the shared record of which replica holds tunnels to which cluster.
type RouteTable interface {
	// Advertise records the tunnels this replica holds, by cluster (none: its rows go).
	Advertise(ctx context.Context, replica, url string, tunnels map[string]int) error
	// Routes lists the URLs of the other replicas that hold a live tunnel to cluster.
	Routes(ctx context.Context, cluster, except string) ([]string, error)
}

// Peering configures forwarding between replicas; nil HubOptions.Peering: no forwarding.
type Peering struct {
	// URL is where the other replicas reach this one.
	URL string
	// Secret is the replicas' shared HMAC key.
	Secret []byte
	Routes RouteTable
	// Refresh is how often this replica records its tunnels (default 5 s); a route not refreshed
	// for three times as long is not used by the others.
	Refresh time.Duration
	// Transport carries forwarded calls (default: a clone of http.DefaultTransport).
	Transport http.RoundTripper
}

// peers is a hub's forwarding state.
type peers struct {
	p     Peering
	kick  chan struct{}
	next  atomic.Uint64
	mu    sync.Mutex
	cache map[string]cachedRoutes
	seen  map[string]time.Time
}

type cachedRoutes struct {
	urls []string
	at   time.Time
}

// routeCacheFor is how long a cluster's routes are reused before the table is read again.
const routeCacheFor = time.Second

func newPeers(p Peering) *peers {
	if p.Refresh <= 0 {
		p.Refresh = 5 * time.Second
	}
	if p.Transport == nil {
		p.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &peers{p: p, kick: make(chan struct{}, 1), cache: map[string]cachedRoutes{}, seen: map[string]time.Time{}}
}

// changed asks the advertising loop to record the tunnels now.
func (p *peers) changed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run keeps this replica's record until ctx ends: every Refresh (and at once when a tunnel
// comes or goes) it records its tunnels in the route table (with peering) and tells each
// connected agent how many replicas live; at the end it removes its routes. Without peering
// and without LiveReplicas it returns at once.
func (h *Hub) Run(ctx context.Context) {
	if h == nil || (h.peers == nil && h.o.LiveReplicas == nil) {
		return
	}
	refresh, kick := 5*time.Second, make(chan struct{})
	if h.peers != nil {
		refresh, kick = h.peers.p.Refresh, h.peers.kick
	}
	tick := time.NewTicker(refresh)
	defer tick.Stop()
	for {
		h.refresh(ctx, refresh)
		select {
		case <-ctx.Done():
			h.withdraw(ctx)
			return
		case <-tick.C:
		case <-kick:
		}
	}
}

// refresh records the routes and tells the agents the live replicas, within d.
func (h *Hub) refresh(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if h.peers != nil {
		p := h.peers
		if err := p.p.Routes.Advertise(ctx, h.o.Replica, p.p.URL, h.tunnelCounts()); err != nil && ctx.Err() == nil {
			h.o.Log.Warn("agent routes not recorded", "err", err)
		}
	}
	if h.o.LiveReplicas == nil {
		return
	}
	n := strconv.Itoa(h.liveReplicas(ctx))
	for _, t := range h.all() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://agent.invalid"+ReplicasPath+"?n="+n, http.NoBody)
		if err != nil {
			return
		}
		if resp, err := t.cc.RoundTrip(req); err == nil {
			_ = resp.Body.Close()
		}
	}
}

// withdraw removes this replica's routes (its tunnels close next).
func (h *Hub) withdraw(ctx context.Context) {
	if h.peers == nil {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := h.peers.p.Routes.Advertise(wctx, h.o.Replica, h.peers.p.URL, nil); err != nil {
		h.o.Log.Warn("agent routes not withdrawn", "err", err)
	}
}

// all lists the live tunnels of every cluster.
func (h *Hub) all() []*tunnel {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*tunnel
	for _, ts := range h.tunnels {
		for _, t := range ts {
			if !t.superseded.Load() && t.cc.Err() == nil {
				out = append(out, t)
			}
		}
	}
	return out
}

// tunnelCounts counts the live tunnels by cluster.
func (h *Hub) tunnelCounts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for cluster, ts := range h.tunnels {
		for _, t := range ts {
			if !t.superseded.Load() && t.cc.Err() == nil {
				out[cluster]++
			}
		}
	}
	return out
}

// routes are the other replicas holding a tunnel to cluster, read at most once a second.
func (p *peers) routes(ctx context.Context, h *Hub, cluster string) []string {
	p.mu.Lock()
	c, ok := p.cache[cluster]
	p.mu.Unlock()
	if ok && time.Since(c.at) < routeCacheFor {
		return c.urls
	}
	urls, err := p.p.Routes.Routes(ctx, cluster, h.o.Replica)
	if err != nil {
		h.o.Log.Warn("agent routes not read", "cluster", cluster, "err", err)
		return nil
	}
	p.mu.Lock()
	p.cache[cluster] = cachedRoutes{urls: urls, at: time.Now()}
	p.mu.Unlock()
	return urls
}

func (p *peers) forget(cluster string) {
	p.mu.Lock()
	delete(p.cache, cluster)
	p.mu.Unlock()
}

// forward sends a call for cluster to a replica holding a tunnel to it. Nothing reaches
// Proxmox when no replica has one (ErrNoAgent, before anything is written).
func (t *clusterTransport) forward(req *http.Request) (*http.Response, error) {
	p, h := t.h.peers, t.h
	urls := p.routes(req.Context(), h, t.cluster)
	if len(urls) == 0 {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		h.m.calls.WithLabelValues(t.cluster, outcomeNoAgent).Inc()
		return nil, fmt.Errorf("%w (cluster %s, nor on another replica)", ErrNoAgent, t.cluster)
	}
	target, err := url.Parse(urls[int(p.next.Add(1)%uint64(len(urls)))])
	if err != nil {
		return nil, fmt.Errorf("agent route of cluster %s: %w", t.cluster, err)
	}
	body, err := readAll(req.Body)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.URL = &url.URL{Scheme: target.Scheme, Host: target.Host, Path: ForwardPath + "/" + t.cluster + req.URL.Path,
		RawPath: ForwardPath + "/" + t.cluster + req.URL.EscapedPath(), RawQuery: req.URL.RawQuery}
	out.Host, out.RequestURI = "", ""
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if len(body) == 0 {
		out.Body, out.GetBody = http.NoBody, nil
	}
	if err := SignForward(out, p.p.Secret, h.o.Replica, body, time.Now()); err != nil {
		return nil, err
	}
	resp, err := p.p.Transport.RoundTrip(out)
	if err != nil {
		p.forget(t.cluster)
		return nil, fmt.Errorf("agent cluster %s through replica %s: %w", t.cluster, target.Host, err)
	}
	h.m.forwarded.WithLabelValues(t.cluster, "sent").Inc()
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(HeaderForward) != "" {
		p.forget(t.cluster)
	}
	return resp, nil
}

// errBodyTooLarge is a call's body over maxRequestBody.
var errBodyTooLarge = errors.New("agent: call body over 1 MiB")

// readAll reads a call's body, at most maxRequestBody (errBodyTooLarge beyond).
func readAll(b io.ReadCloser) ([]byte, error) {
	if b == nil || b == http.NoBody {
		return nil, nil
	}
	defer b.Close()
	raw, err := io.ReadAll(io.LimitReader(b, maxRequestBody+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxRequestBody {
		return nil, errBodyTooLarge
	}
	return raw, nil
}

// peerMAC is the signature of a forwarded call.
func peerMAC(secret []byte, replica, at, nonce, method, uri string, body []byte) []byte {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, secret)
	for _, part := range []string{"pvebill-peer v1", replica, at, nonce, method, uri, hex.EncodeToString(sum[:])} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// SignForward signs a call forwarded to another replica (the Pvebill-Peer-* headers): replica is the
// sender, body the call's body, now the time it is sent.
func SignForward(r *http.Request, secret []byte, replica string, body []byte, now time.Time) error {
	n := make([]byte, 16)
	if _, err := rand.Read(n); err != nil {
		return err
	}
	nonce, at := hex.EncodeToString(n), strconv.FormatInt(now.UnixMilli(), 10)
	r.Header.Set(HeaderPeerReplica, replica)
	r.Header.Set(HeaderPeerTime, at)
	r.Header.Set(HeaderPeerNonce, nonce)
	r.Header.Set(HeaderPeerSignature, hex.EncodeToString(peerMAC(secret, replica, at, nonce, r.Method, r.URL.RequestURI(), body)))
	return nil
}

// verifyPeer checks a forwarded call's signature, time and nonce; the reason on failure is a
// closed-set value.
func (p *peers) verifyPeer(r *http.Request, body []byte, now time.Time) string {
	replica, at, nonce := r.Header.Get(HeaderPeerReplica), r.Header.Get(HeaderPeerTime), r.Header.Get(HeaderPeerNonce)
	sig, err := hex.DecodeString(r.Header.Get(HeaderPeerSignature))
	if err != nil || replica == "" || len(nonce) != 32 ||
		!hmac.Equal(sig, peerMAC(p.p.Secret, replica, at, nonce, r.Method, r.URL.RequestURI(), body)) {
		return PeerUnauthenticated
	}
	ms, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return PeerUnauthenticated
	}
	if d := now.Sub(time.UnixMilli(ms)); d > peerClockSkew || d < -peerClockSkew {
		return PeerStale
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, seen := range p.seen {
		if now.Sub(seen) > 2*peerClockSkew {
			delete(p.seen, k)
		}
	}
	if _, dup := p.seen[nonce]; dup {
		return PeerReplayed
	}
	p.seen[nonce] = now
	return ""
}

// ServeForward is the internal endpoint: a call another replica forwards, sent into one of this
// replica's own tunnels (never forwarded again). No tunnel here: 503 with HeaderForward, nothing
// sent. A tunnel that breaks during the call breaks the forwarding connection too, so the
// sending replica sees what a dropped connection looks like and never sends the call again
// blindly.
func (h *Hub) ServeForward(w http.ResponseWriter, r *http.Request) {
	p := h.peers
	if p == nil {
		http.NotFound(w, r)
		return
	}
	rest, _ := strings.CutPrefix(r.URL.EscapedPath(), ForwardPath+"/")
	cluster, path, _ := strings.Cut(rest, "/")
	path = "/" + path
	body, err := readAll(r.Body)
	if errors.Is(err, errBodyTooLarge) {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		return // the sending replica's connection broke; nothing was sent
	}
	if reason := p.verifyPeer(r, body, time.Now()); reason != "" {
		h.refusePeer(w, r, reason, http.StatusUnauthorized)
		return
	}
	if _, ok := h.o.Keys[cluster]; !ok || !strings.HasPrefix(path, pve.APIBasePath+"/") {
		h.refusePeer(w, r, PeerUnknownCluster, http.StatusNotFound)
		return
	}
	h.m.forwarded.WithLabelValues(cluster, "served").Inc()
	target, err := url.Parse("http://agent.invalid" + path)
	if err != nil {
		h.refusePeer(w, r, PeerUnknownCluster, http.StatusNotFound)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	proxy := &httputil.ReverseProxy{
		Transport:     &clusterTransport{h: h, cluster: cluster, local: true},
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: target.Host, Path: target.Path, RawPath: target.RawPath,
				RawQuery: r.URL.RawQuery}
			pr.Out.Host = ""
			for _, k := range []string{HeaderPeerReplica, HeaderPeerTime, HeaderPeerNonce, HeaderPeerSignature} {
				pr.Out.Header.Del(k)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			if errors.Is(err, ErrNoAgent) {
				w.Header().Set(HeaderForward, "no_agent")
				http.Error(w, "no agent of the cluster is connected to this replica either", http.StatusServiceUnavailable)
				return
			}
			panic(http.ErrAbortHandler)
		},
	}
	proxy.ServeHTTP(w, r)
}

func (h *Hub) refusePeer(w http.ResponseWriter, r *http.Request, reason string, status int) {
	h.m.peerRefused.WithLabelValues(reason).Inc()
	h.o.Log.Warn("forwarded agent call refused", "reason", reason, "remote", r.RemoteAddr)
	http.Error(w, "forwarded call refused: "+reason, status)
}
