package agenttest

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy between an agent and pvebill that injects faults: Stall stops
// forwarding on the open connections without closing them (a half-open link: no FIN, no RST),
// and an idle timeout closes a connection after that long without a byte either way (a load
// balancer's idle timer).
type Proxy struct {
	ln     net.Listener
	target string
	idle   time.Duration
	mu     sync.Mutex
	links  []*link
	closed atomic.Int64
}

type link struct {
	a, b    net.Conn
	stalled atomic.Bool
	last    atomic.Int64
}

// StartProxy forwards a new listener on loopback to target; idle 0 means no idle timeout.
func StartProxy(t testing.TB, target string, idle time.Duration) *Proxy {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, idle: idle}
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.closeAll() })
	return p
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// IdleClosed counts the connections the idle timer closed.
func (p *Proxy) IdleClosed() int64 { return p.closed.Load() }

// Stall stops forwarding on every open connection; they stay open.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.stalled.Store(true)
	}
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		_ = l.a.Close()
		_ = l.b.Close()
	}
}

func (p *Proxy) accept() {
	for {
		a, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", p.target)
		if err != nil {
			_ = a.Close()
			continue
		}
		l := &link{a: a, b: b}
		l.last.Store(time.Now().UnixNano())
		p.mu.Lock()
		p.links = append(p.links, l)
		p.mu.Unlock()
		go l.pipe(a, b)
		go l.pipe(b, a)
		if p.idle > 0 {
			go p.watchIdle(l)
		}
	}
}

// pipe copies until either side fails; a stalled link drops what it reads and sends nothing.
func (l *link) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.stalled.Load() {
			l.last.Store(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) || !l.stalled.Load() {
				_ = dst.Close()
			}
			return
		}
	}
}

// watchIdle closes the link once no byte has passed for the idle time, as a proxy's read
// timer does: the timer is set for the rest of the idle time after the last byte it has seen.
func (p *Proxy) watchIdle(l *link) {
	timer := time.NewTimer(p.idle)
	defer timer.Stop()
	for range timer.C {
		quiet := time.Since(time.Unix(0, l.last.Load()))
		if quiet < p.idle {
			timer.Reset(p.idle - quiet)
			continue
		}
		if l.a.Close() == nil {
			p.closed.Add(1)
		}
		_ = l.b.Close()
		return
	}
}
