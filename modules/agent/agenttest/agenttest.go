// Package agenttest runs a real agent in-process for tests: its own key, the simulator behind
// it, real WebSocket over loopback TCP to a pvebill endpoint, and connections a test can cut.
package agenttest

import (
	"context"
	"crypto/ed25519"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pvebill/modules/agent"
	"pvebill/modules/pve/pvesim/simtest"
)

// Key writes a fresh private key into a test directory and returns its file and the public
// key as pvebill's config names it.
func Key(t testing.TB) (file string, public string, pub ed25519.PublicKey) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "agent.key")
	pub, err := agent.GenerateKeyFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, agent.FormatPublicKey(pub), pub
}

// Config is an agent config for cluster, dialing server (pvebill's base URL), with the
// simulator at simURL behind it and its token and console user.
func Config(server, cluster, keyFile, simURL string) agent.Config {
	return agent.Config{Server: server, Cluster: cluster, PrivateKeyFile: keyFile, Proxmox: agent.Proxmox{
		URL: simURL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		ConsoleUser: simtest.ConsoleUser, ConsolePassword: simtest.ConsolePassword}}
}

// Running is an agent running in the background.
type Running struct {
	Agent  *agent.Agent
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	conns  []net.Conn
}

// Start runs an agent until the test ends (or Kill/Stop). o.DialContext, when set, is wrapped.
func Start(t testing.TB, cfg agent.Config, o agent.Options) *Running {
	t.Helper()
	r := &Running{done: make(chan struct{})}
	dial := o.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	o.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			r.mu.Lock()
			r.conns = append(r.conns, c)
			r.mu.Unlock()
		}
		return c, err
	}
	a, err := agent.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	r.Agent = a
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		a.Run(ctx)
	}()
	t.Cleanup(r.Kill)
	return r
}

// Kill ends the agent at once, as SIGKILL would: its TCP connections are closed with no drain.
func (r *Running) Kill() {
	r.cancel()
	r.mu.Lock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	<-r.done
}

// Running reports whether the agent still runs (not killed).
func (r *Running) Running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}
