package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"pvebill/modules/pve"
)

// Headers of a WebSocket carried as one HTTP/2 stream: the request asks the agent to open the
// upgrade to Proxmox itself; the answer's status header says Proxmox switched protocols, after
// which both bodies carry the raw WebSocket bytes.
const (
	HeaderUpgrade       = "Pvebill-Agent-Upgrade"
	HeaderUpgradeStatus = "Pvebill-Agent-Upgrade-Status"
)

// Transport is the RoundTripper of an agent cluster's Proxmox client: every call is a stream in
// one of the cluster's tunnels. With no agent connected it fails at once with ErrNoAgent, before
// anything is sent (the client treats it as a connection that could not be opened).
func (h *Hub) Transport(cluster string) http.RoundTripper {
	h.m.init(cluster)
	return &clusterTransport{h: h, cluster: cluster}
}

type clusterTransport struct {
	h       *Hub
	cluster string
	// local: only this replica's own tunnels (a call forwarded here is never forwarded again).
	local bool
}

// WaitReady waits until an agent of the cluster is connected (pve.TunnelWaiter): an
// operation's call waits for the agent instead of failing.
func (t *clusterTransport) WaitReady(ctx context.Context) error { return t.h.waitReady(ctx, t.cluster) }

func (t *clusterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tun := t.h.pick(t.cluster)
	if tun == nil && !t.local && t.h.peers != nil {
		return t.forward(req)
	}
	if tun == nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		t.h.m.calls.WithLabelValues(t.cluster, outcomeNoAgent).Inc()
		return nil, fmt.Errorf("%w (cluster %s)", ErrNoAgent, t.cluster)
	}
	if strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return t.roundTripUpgrade(tun, req)
	}
	m := t.h.m
	m.streams.WithLabelValues(t.cluster).Inc()
	if req.ContentLength > 0 {
		m.bytes.WithLabelValues(t.cluster, "sent").Add(float64(req.ContentLength))
	}
	resp, err := tun.cc.RoundTrip(req)
	if err != nil {
		m.streams.WithLabelValues(t.cluster).Dec()
		m.calls.WithLabelValues(t.cluster, outcomeFailed).Inc()
		return nil, fmt.Errorf("agent tunnel of cluster %s: %w", t.cluster, err)
	}
	t.answered(resp)
	resp.Body = &countedBody{ReadCloser: resp.Body, t: t}
	return resp, nil
}

// answered counts an answer, and a refusal apart.
func (t *clusterTransport) answered(resp *http.Response) {
	if resp.Header.Get(pve.HeaderAgentRefused) != "" {
		t.h.m.calls.WithLabelValues(t.cluster, outcomeRefused).Inc()
		t.h.m.refused.WithLabelValues(t.cluster).Inc()
		return
	}
	t.h.m.calls.WithLabelValues(t.cluster, outcomeAnswered).Inc()
}

// roundTripUpgrade carries a WebSocket upgrade as one stream. The request body is a pipe the
// caller writes the WebSocket's bytes into; the caller's context bounds the upgrade only, not
// the stream after it (a WebSocket outlives its dial).
func (t *clusterTransport) roundTripUpgrade(tun *tunnel, req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	stop := context.AfterFunc(req.Context(), cancel)
	out := req.Clone(sctx)
	out.Header.Del("Upgrade")
	out.Header.Del("Connection")
	out.Header.Set(HeaderUpgrade, "websocket")
	out.Method, out.Body, out.ContentLength, out.GetBody = http.MethodGet, pr, -1, nil
	m := t.h.m
	m.streams.WithLabelValues(t.cluster).Inc()
	resp, err := tun.cc.RoundTrip(out)
	stop()
	if err != nil {
		cancel()
		_ = pw.Close()
		m.streams.WithLabelValues(t.cluster).Dec()
		m.calls.WithLabelValues(t.cluster, outcomeFailed).Inc()
		return nil, fmt.Errorf("agent tunnel of cluster %s: %w", t.cluster, err)
	}
	t.answered(resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderUpgradeStatus) != "101" {
		_ = pw.Close()
		resp.Body = &countedBody{ReadCloser: resp.Body, t: t, cancel: cancel}
		return resp, nil
	}
	resp.StatusCode, resp.Status = http.StatusSwitchingProtocols, "101 Switching Protocols"
	resp.Header.Set("Upgrade", "websocket")
	resp.Header.Set("Connection", "Upgrade")
	resp.Body = &duplexBody{countedBody: countedBody{ReadCloser: resp.Body, t: t, cancel: cancel}, w: pw}
	return resp, nil
}

// countedBody counts the bytes received and closes the stream's gauge once.
type countedBody struct {
	io.ReadCloser
	t      *clusterTransport
	cancel context.CancelFunc
	once   sync.Once
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.t.h.m.bytes.WithLabelValues(b.t.cluster, "received").Add(float64(n))
	}
	return n, err
}

func (b *countedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		if b.cancel != nil {
			b.cancel()
		}
		b.t.h.m.streams.WithLabelValues(b.t.cluster).Dec()
	})
	return err
}

// duplexBody is an upgraded stream: reads come from the agent, writes go to it.
type duplexBody struct {
	countedBody
	w *io.PipeWriter
}

func (b *duplexBody) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if n > 0 {
		b.t.h.m.bytes.WithLabelValues(b.t.cluster, "sent").Add(float64(n))
	}
	return n, err
}

func (b *duplexBody) Close() error {
	_ = b.w.Close()
	return b.countedBody.Close()
}
