package agent_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"pvebill/modules/agent"
	"pvebill/modules/pve/pvesim/simtest"
)

// R57, R41: a console goes through the tunnel: the agent logs its console user in (pvebill
// holds no console password), starts termproxy, and carries the vncwebsocket as one stream; the
// terminal's handshake and a command's output pass both ways.
func TestConsoleThroughTunnel(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	s.startAgent(t, agent.Options{})
	if !s.client.HasConsoleUser() {
		t.Fatal("an agent cluster offers no console")
	}
	c := ctx(t)
	p, err := s.client.Termproxy(c, "pve1", 200)
	if err != nil {
		t.Fatal(err)
	}
	if p.User != simtest.ConsoleUser {
		t.Fatalf("termproxy started for %q, want the agent's console user", p.User)
	}
	ws, err := s.client.DialConsole(c, "pve1", "lxc", 200, p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	if err := ws.Write(c, websocket.MessageBinary, []byte(p.User+":"+p.Ticket+"\n")); err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, ws, "OK")
	cmd := "echo through-the-tunnel\n"
	if err := ws.Write(c, websocket.MessageBinary, []byte("0:"+strconv.Itoa(len(cmd))+":"+cmd)); err != nil {
		t.Fatal(err)
	}
	out += readUntil(t, ws, "through-the-tunnel\r\n")
	logins := 0
	for _, r := range s.sim.Requests() {
		if r.Path == "/access/ticket" {
			logins++
		}
	}
	if logins != 1 {
		t.Fatalf("%d console logins at Proxmox, want 1 (by the agent)", logins)
	}
	_ = out
}

// readUntil reads the console until its output holds want.
func readUntil(t *testing.T, ws *websocket.Conn, want string) string {
	t.Helper()
	var got strings.Builder
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(got.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("console said %q, waiting for %q", got.String(), want)
		}
		_, b, err := ws.Read(ctx(t))
		if err != nil {
			t.Fatalf("console read after %q: %v", got.String(), err)
		}
		got.Write(b)
	}
	return got.String()
}
