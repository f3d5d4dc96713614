package agent_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/stack/stacktest/poll"
)

// dialRaw opens the agents' WebSocket as an agent would and returns the challenge.
func dialRaw(t *testing.T, s *stand) (*websocket.Conn, agent.Challenge) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(s.srv.URL, "http") + agent.ConnectPath
	ws, _, err := websocket.Dial(ctx(t), url, &websocket.DialOptions{Subprotocols: []string{agent.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	_, raw, err := ws.Read(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ch agent.Challenge
	if err := json.Unmarshal(raw, &ch); err != nil || len(ch.Nonce) != 32 {
		t.Fatalf("challenge %s: %v", raw, err)
	}
	return ws, ch
}

// welcome sends a hello's exact bytes and reads the answer.
func welcome(t *testing.T, ws *websocket.Conn, hello []byte) agent.Welcome {
	t.Helper()
	if err := ws.Write(ctx(t), websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	_, raw, err := ws.Read(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var w agent.Welcome
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("welcome %s: %v", raw, err)
	}
	return w
}

func failures(s *stand, reason string) float64 {
	return testutil.ToFloat64(counterVec(s, "pvebill_agent_handshake_failures_total", reason))
}

// R57: a handshake recorded byte for byte and sent again on a new connection is refused (the
// nonce is fresh per connection) and counted; the recorded one was accepted.
func TestHandshakeReplayRefused(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	key, err := agent.LoadPrivateKey(s.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(s.srv.URL, "http://")
	ws, ch := dialRaw(t, s)
	recorded, _ := json.Marshal(agent.Sign(key, ch, "c1", host))
	if w := welcome(t, ws, recorded); !w.OK {
		t.Fatalf("genuine handshake refused: %+v", w)
	}
	ws2, ch2 := dialRaw(t, s)
	if string(ch2.Nonce) == string(ch.Nonce) {
		t.Fatal("the nonce repeated")
	}
	if w := welcome(t, ws2, recorded); w.OK || w.Error != agent.FailBadSignature {
		t.Fatalf("replayed handshake: %+v", w)
	}
	if got := failures(s, agent.FailBadSignature); got != 1 {
		t.Fatalf("bad_signature failures %v, want 1", got)
	}
}

// R57: another key for the cluster (a second agent claiming it), an unknown cluster and a
// signature for another server are refused, each counted under its reason; no tunnel is kept.
func TestHandshakeRefusals(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	_, other, _ := ed25519.GenerateKey(nil)
	key, _ := agent.LoadPrivateKey(s.keyFile)
	host := strings.TrimPrefix(s.srv.URL, "http://")
	cases := []struct {
		name, reason string
		hello        func(agent.Challenge) agent.Hello
	}{
		{"another key", agent.FailBadSignature, func(c agent.Challenge) agent.Hello { return agent.Sign(other, c, "c1", host) }},
		{"unknown cluster", agent.FailUnknownClust, func(c agent.Challenge) agent.Hello { return agent.Sign(key, c, "c9", host) }},
		{"another server", agent.FailBadSignature, func(c agent.Challenge) agent.Hello {
			return agent.Sign(key, c, "c1", "pvebill.example.net")
		}},
	}
	for i, tc := range cases {
		ws, ch := dialRaw(t, s)
		raw, _ := json.Marshal(tc.hello(ch))
		if w := welcome(t, ws, raw); w.OK || w.Error != tc.reason {
			t.Fatalf("%s: %+v", tc.name, w)
		}
		_ = i
	}
	if failures(s, agent.FailBadSignature) != 2 || failures(s, agent.FailUnknownClust) != 1 {
		t.Fatalf("failures bad_signature %v unknown_cluster %v", failures(s, agent.FailBadSignature),
			failures(s, agent.FailUnknownClust))
	}
	if n := len(s.hub.Agents("c1")); n != 0 {
		t.Fatalf("%d tunnels kept", n)
	}
	// A real agent with the wrong key keeps being refused, and says why.
	wrong := agenttest.Config(s.srv.URL, "c1", s.keyFile, s.sim.URL)
	wrong.PrivateKeyFile, _, _ = agenttest.Key(t)
	agenttest.Start(t, wrong, agent.Options{BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond})
	poll.Wait(5*time.Second, func() bool { return failures(s, agent.FailBadSignature) >= 4 })
	if failures(s, agent.FailBadSignature) < 4 || len(s.hub.Agents("c1")) != 0 {
		t.Fatalf("wrong-key agent: failures %v, tunnels %d", failures(s, agent.FailBadSignature), len(s.hub.Agents("c1")))
	}
}

// R57: the agent verifies pvebill's certificate: an unknown one is refused before any
// handshake, and a pinned fingerprint admits it.
func TestAgentVerifiesServerTLS(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	mux := http.NewServeMux()
	mux.Handle("GET "+agent.ConnectPath, s.hub)
	tls := httptest.NewTLSServer(mux)
	t.Cleanup(tls.Close)
	cfg := agenttest.Config(tls.URL, "c1", s.keyFile, s.sim.URL)
	a, err := agent.New(cfg, agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := a.Check(cctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverified certificate accepted: %v", err)
	}
	sum := sha256.Sum256(tls.Certificate().Raw)
	var pin []string
	for _, b := range sum {
		pin = append(pin, fmt.Sprintf("%02X", b))
	}
	cfg.ServerFingerprint = strings.Join(pin, ":")
	if a, err = agent.New(cfg, agent.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(cctx); err != nil {
		t.Fatalf("pinned certificate: %v", err)
	}
	sum[0] ^= 1
	pin[0] = fmt.Sprintf("%02X", sum[0])
	cfg.ServerFingerprint = strings.Join(pin, ":")
	if a, err = agent.New(cfg, agent.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(cctx); err == nil {
		t.Fatal("a wrong pin was accepted")
	}
}
