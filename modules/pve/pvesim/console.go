package pvesim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Console proxies (POST .../lxc/{vmid}/termproxy, POST .../qemu/{vmid}/vncproxy), after
// pve-container's API2/LXC.pm and qemu-server's API2/Qemu.pm: each answers a port in
// 5900–5999, a vncticket bound to the caller and the guest, the caller and a UPID of a
// "vncproxy" task. The port then waits consoleWait for one vncwebsocket client
// (console_socket.go).

const (
	consolePortFirst = 5900
	consolePortLast  = 5999
	// consoleWait is how long a proxy waits for its client before giving up.
	consoleWait = 30 * time.Second
	// consoleCert stands for the node certificate vncproxy answers with.
	consoleCert = "-----BEGIN CERTIFICATE-----\npvesim node certificate\n-----END CERTIFICATE-----\n"
)

// consoleSession is a proxy waiting for its client, or connected to it.
type consoleSession struct {
	port    int
	node    string
	typ     string // "lxc" (termproxy) or "qemu" (vncproxy)
	vmid    int
	user    string
	ticket  string
	created time.Time
	// cancel ends a connected session (CloseConsoles).
	cancel context.CancelFunc
}

// consoleState is the console proxies by port. It has its own lock, taken after s.mu.
type consoleState struct {
	ticketKey []byte
	conMu     sync.Mutex
	sessions  map[int]*consoleSession
}

func newConsoleState() consoleState {
	return consoleState{ticketKey: newTicketKey(), sessions: map[int]*consoleSession{}}
}

// openProxy answers a termproxy or vncproxy call for a running guest of typ.
func (s *Sim) openProxy(c *reqCtx, typ string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, typ)
	if err != nil {
		return nil, err
	}
	if !g.running {
		if typ == "lxc" {
			return nil, fail500("CT %d not running", g.vmid)
		}
		return nil, fail500("VM %d not running", g.vmid)
	}
	s.conMu.Lock()
	defer s.conMu.Unlock()
	now := s.now()
	port := s.freeConsolePort(now)
	if port == 0 {
		return nil, fail500("unable to find free port (%d-%d)", consolePortFirst, consolePortLast)
	}
	sess := &consoleSession{port: port, node: c.node, typ: typ, vmid: g.vmid, user: c.user, created: now}
	sess.ticket = "PVEVNC:" + fmt.Sprintf("%08X", now.Unix()) + "::" +
		s.sign("PVEVNC", c.user, fmt.Sprintf("/vms/%d", g.vmid), fmt.Sprint(port))
	s.sessions[port] = sess
	t := s.newTask(c, c.node, "vncproxy", fmt.Sprint(g.vmid))
	return map[string]any{"port": port, "ticket": sess.ticket, "user": c.user, "upid": t.upid}, nil
}

// freeConsolePort is the lowest port with no live proxy; proxies left waiting longer than
// consoleWait are dropped first. Callers hold conMu.
func (s *Sim) freeConsolePort(now time.Time) int {
	for p, sess := range s.sessions {
		if sess.cancel == nil && now.Sub(sess.created) > consoleWait {
			delete(s.sessions, p)
		}
	}
	for p := consolePortFirst; p <= consolePortLast; p++ {
		if s.sessions[p] == nil {
			return p
		}
	}
	return 0
}

func (s *Sim) hLXCTermproxy(c *reqCtx) (any, error) { return s.openProxy(c, "lxc") }

func (s *Sim) hQemuVncproxy(c *reqCtx) (any, error) {
	out, err := s.openProxy(c, "qemu")
	if err != nil {
		return nil, err
	}
	out["cert"] = consoleCert
	return out, nil
}

// claimConsole hands the proxy at port to its client once: the vncticket must be the one
// issued for this port, guest and user, and the proxy must still wait.
func (s *Sim) claimConsole(node, typ string, vmid, port int, user, ticket string) (*consoleSession, context.Context, bool) {
	s.conMu.Lock()
	defer s.conMu.Unlock()
	sess := s.sessions[port]
	if sess == nil || sess.cancel != nil || sess.node != node || sess.typ != typ || sess.vmid != vmid ||
		sess.user != user || sess.ticket != ticket || s.now().Sub(sess.created) > consoleWait {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	sess.cancel = cancel
	return sess, ctx, true
}

func (s *Sim) releaseConsole(sess *consoleSession) {
	s.conMu.Lock()
	defer s.conMu.Unlock()
	if s.sessions[sess.port] == sess {
		delete(s.sessions, sess.port)
	}
	sess.cancel()
}

// CloseConsoles ends every connected console session and forgets waiting proxies, as a node
// restart of the proxies would. It returns how many connected sessions it ended.
func (s *Sim) CloseConsoles() int {
	s.conMu.Lock()
	defer s.conMu.Unlock()
	n := 0
	for p, sess := range s.sessions {
		if sess.cancel != nil {
			sess.cancel()
			n++
		}
		delete(s.sessions, p)
	}
	return n
}

// OpenConsoles counts the connected console sessions.
func (s *Sim) OpenConsoles() int {
	s.conMu.Lock()
	defer s.conMu.Unlock()
	n := 0
	for _, sess := range s.sessions {
		if sess.cancel != nil {
			n++
		}
	}
	return n
}

// consoleGuest reads what a console shows of a guest: its hostname (a container's hostname,
// a VM's name) and whether it still exists.
func (s *Sim) consoleGuest(vmid int) (name string, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guests[vmid]
	if g == nil {
		return "", false
	}
	return strings.TrimSpace(s.guestName(g)), true
}
