package pdnstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// PTR reads the content of the PTR record named name (fully qualified) in zone through the
// API; "" when there is none.
func (s *Server) PTR(t *testing.T, zone, name string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet,
		s.URL+"/api/v1/servers/localhost/zones/"+strings.TrimSuffix(zone, ".")+".", nil)
	req.Header.Set("X-API-Key", s.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("zone %s: %s", zone, res.Status)
	}
	var z struct {
		RRSets []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Records []struct {
				Content string `json:"content"`
			} `json:"records"`
		} `json:"rrsets"`
	}
	if err := json.NewDecoder(res.Body).Decode(&z); err != nil {
		t.Fatal(err)
	}
	for _, rr := range z.RRSets {
		if rr.Type == "PTR" && rr.Name == name && len(rr.Records) > 0 {
			return rr.Records[0].Content
		}
	}
	return ""
}

// Gate is a TCP forwarder in front of the API that a test opens and closes: closed, every
// connection is dropped at once, as when PowerDNS is down.
type Gate struct {
	URL  string // the API's base URL through the gate
	open atomic.Bool
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	live map[net.Conn]bool // the client side of the connections forwarded now
}

// Gate starts a gate to s's API, open, until the test ends.
func (s *Server) Gate(t *testing.T) *Gate {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := strings.TrimPrefix(s.URL, "http://")
	g := &Gate{URL: fmt.Sprintf("http://%s", ln.Addr()), ln: ln, live: map[net.Conn]bool{}}
	g.open.Store(true)
	g.wg.Add(1)
	go g.serve(target)
	t.Cleanup(func() { ln.Close(); g.wg.Wait() })
	return g
}

// Open lets connections through.
func (g *Gate) Open() { g.open.Store(true) }

// Close drops the connections forwarded now (kept-alive ones too) and every new one.
func (g *Gate) Close() {
	g.open.Store(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.live {
		c.Close()
	}
}

func (g *Gate) serve(target string) {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		if !g.open.Load() {
			g.mu.Unlock()
			c.Close()
			continue
		}
		g.live[c] = true
		g.mu.Unlock()
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			forward(c, target)
			g.mu.Lock()
			delete(g.live, c)
			g.mu.Unlock()
		}()
	}
}

func forward(c net.Conn, target string) {
	defer c.Close()
	up, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
}
