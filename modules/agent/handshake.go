package agent

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

// The handshake, inside the WebSocket before the tunnel starts (design.md, "The agent"):
//
//  1. pvebill sends a challenge: the protocol version and a fresh 32-byte nonce.
//  2. The agent answers hello: its cluster and an ed25519 signature over (nonce, cluster,
//     pvebill's host as the agent dialed it, protocol version).
//  3. pvebill verifies the signature with the cluster's configured public key and its own host
//     as the request named it, and sends welcome (or a refusal and closes).
//
// A recorded hello is worthless: the next connection has another nonce.

// ConnectPath is pvebill's endpoint for agents.
const ConnectPath = "/agent/v1/connect"

// Subprotocol is the WebSocket subprotocol of version 1.
const Subprotocol = "pvebill-agent.v1"

// ProtocolVersion is the handshake's version.
const ProtocolVersion = 1

const nonceSize = 32

// Challenge is pvebill's first message.
type Challenge struct {
	Protocol int    `json:"protocol"`
	Nonce    []byte `json:"nonce"`
}

// Hello is the agent's answer. Instance names the agent process (random at its start): a new
// tunnel of the same instance replaces its older one, which is dead or dying.
type Hello struct {
	Protocol  int    `json:"protocol"`
	Cluster   string `json:"cluster"`
	Instance  string `json:"instance,omitempty"`
	Signature []byte `json:"signature"`
}

// Welcome ends the handshake; Error is set on a refusal.
type Welcome struct {
	OK      bool   `json:"ok"`
	Replica string `json:"replica,omitempty"`
	// Replicas is the number of live replicas: the agent keeps tunnels to that many distinct
	// ones, up to its configured count.
	Replicas int    `json:"replicas,omitempty"`
	Error    string `json:"error,omitempty"`
}

// signedBytes is what the agent signs.
func signedBytes(nonce []byte, cluster, server string, protocol int) []byte {
	var b strings.Builder
	b.WriteString("pvebill-agent handshake\x00")
	b.Write(nonce)
	b.WriteString("\x00" + cluster + "\x00" + strings.ToLower(server) + "\x00" + strconv.Itoa(protocol))
	return []byte(b.String())
}

// Sign answers a challenge for cluster; server is pvebill's host[:port] as dialed.
func Sign(key ed25519.PrivateKey, c Challenge, cluster, server string) Hello {
	return Hello{Protocol: ProtocolVersion, Cluster: cluster,
		Signature: ed25519.Sign(key, signedBytes(c.Nonce, cluster, server, ProtocolVersion))}
}

// Handshake failure reasons (a closed set: a metric label).
const (
	FailProtocol      = "protocol"
	FailUnknownClust  = "unknown_cluster"
	FailBadSignature  = "bad_signature"
	FailTimeout       = "timeout"
	FailShuttingDown  = "shutting_down"
	handshakeRefusal  = websocket.StatusCode(4403)
	handshakeDraining = websocket.StatusCode(4503)
)

// HandshakeError is a refused handshake with its reason.
type HandshakeError struct {
	Reason string
	Detail string
}

func (e *HandshakeError) Error() string {
	return "agent handshake refused: " + e.Reason + ": " + e.Detail
}

func newNonce() ([]byte, error) {
	n := make([]byte, nonceSize)
	_, err := rand.Read(n)
	return n, err
}

func writeJSON(ctx context.Context, ws *websocket.Conn, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ws.Write(ctx, websocket.MessageText, raw)
}

func readJSON(ctx context.Context, ws *websocket.Conn, v any) error {
	typ, raw, err := ws.Read(ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return errors.New("handshake message is not text")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("handshake message: %w", err)
	}
	return nil
}

// verify checks a hello against the configured keys; the reason on failure is a closed-set
// value.
func verify(keys map[string]ed25519.PublicKey, nonce []byte, h Hello, server string) *HandshakeError {
	if h.Protocol != ProtocolVersion {
		return &HandshakeError{Reason: FailProtocol, Detail: "protocol " + strconv.Itoa(h.Protocol)}
	}
	key, ok := keys[h.Cluster]
	if !ok {
		return &HandshakeError{Reason: FailUnknownClust, Detail: "no cluster with an agent key is named " + strconv.Quote(h.Cluster)}
	}
	if !ed25519.Verify(key, signedBytes(nonce, h.Cluster, server, h.Protocol), h.Signature) {
		return &HandshakeError{Reason: FailBadSignature, Detail: "signature does not verify with cluster " + h.Cluster + "'s key"}
	}
	return nil
}
