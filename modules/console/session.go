package console

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"pvebill/models"
)

// WebSocket close codes the page explains to the visitor (4000-4999 are the application's).
const (
	closeMaxSession     websocket.StatusCode = 4000
	closeServiceChanged websocket.StatusCode = 4001
)

// maxBrowserMessage bounds one message from the browser (keystrokes, pointer events, resizes).
const maxBrowserMessage = 1 << 20

// session is one relayed console: the browser's WebSocket and the guest's console at Proxmox.
type session struct {
	key     string
	kind    Kind
	ref     int64
	client  string
	nonce   []byte // its token's, whose claim counts the session as open
	browser *websocket.Conn
	up      Upstream
	// ctx ends with the session (end); upstream was opened under it.
	ctx    context.Context
	cancel context.CancelFunc

	once   sync.Once
	mu     sync.Mutex
	reason string
}

// end ends the session for reason; the first reason given is the one counted.
func (ss *session) end(reason string) {
	ss.once.Do(func() {
		ss.mu.Lock()
		ss.reason = reason
		ss.mu.Unlock()
		ss.cancel()
	})
}

func (ss *session) endReason() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.reason
}

// ServeSocket is GET /console/{token}/ws: it checks the page's origin, claims the token (its
// single use, and a place among the open sessions), checks the service again, opens the guest's
// console at Proxmox, accepts the WebSocket and relays until either side leaves,
// console.max_session passes or the service changes (R41). A refusal before the upgrade is the
// 410 page (403 for another site's page, 429 beyond the open sessions allowed, 502 when Proxmox
// did not open the console).
func (s *Service) ServeSocket(w http.ResponseWriter, r *http.Request, token string) {
	if !isUpgrade(r) {
		// A plain GET must not use the token: only the WebSocket does.
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "this is the console's WebSocket: open the console page", http.StatusUpgradeRequired)
		return
	}
	// Another site's page is refused before the token is used or Proxmox is asked anything.
	if !s.originAllowed(r) {
		s.m.refused.WithLabelValues(reasonOrigin).Inc()
		s.writeRefusal(w, r, reasonOrigin)
		return
	}
	g, svc, reason := s.claim(r.Context(), token)
	if reason != "" {
		s.m.refused.WithLabelValues(reason).Inc()
		s.writeRefusal(w, r, reason)
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	up, err := s.o.Opener.OpenConsole(ctx, svc, g.Kind)
	if err != nil {
		cancel()
		s.endClaim(g.Nonce[:])
		s.o.Log.Warn("console: Proxmox did not open the console", "service_id", svc.ServiceID, "kind", g.Kind, "err", err)
		s.m.refused.WithLabelValues(reasonUpstream).Inc()
		s.writeRefusal(w, r, reasonUpstream)
		return
	}
	// The server's read and write time-outs bound requests, not a console session.
	rc := http.NewResponseController(w)
	if err := errors.Join(rc.SetReadDeadline(time.Time{}), rc.SetWriteDeadline(time.Time{})); err != nil {
		s.o.Log.Warn("console: the connection keeps the server's time-outs", "err", err)
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"binary"},
		OriginPatterns: originPatterns(s.o.PublicURL), CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		cancel()
		_ = up.Conn.Close()
		s.endClaim(g.Nonce[:])
		return
	}
	conn.SetReadLimit(maxBrowserMessage)
	ss := &session{key: sessionKey(svc.ClientID, svc.ServiceID), kind: g.Kind, ref: svc.ID, client: g.ClientID,
		nonce: g.Nonce[:], browser: conn, up: up, ctx: ctx, cancel: cancel}
	s.run(ss)
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// claim checks a token and claims its nonce: a malformed or foreign token, one past its 60 s,
// one opened before, one whose service is no longer the client's or may no longer have a
// console, and one beyond the open sessions its service or client may have, is refused with its
// reason. The claim counts as an open session from here; a refusal after it ends it (the token
// stays used), or, beyond the open sessions allowed, releases it (the token may be opened once
// another session ended, within its 60 s).
func (s *Service) claim(ctx context.Context, token string) (Grant, *models.Service, string) {
	if s.o.Secret == "" {
		return Grant{}, nil, reasonInvalid
	}
	g, err := s.tokens.Parse(token)
	if err != nil {
		return g, nil, reasonInvalid
	}
	now := s.o.Now()
	if !now.Before(g.Expires) {
		return g, nil, reasonExpired
	}
	first, err := s.o.DB.ClaimConsole(ctx, models.ConsoleOpen{Nonce: g.Nonce[:], ServiceRef: g.ServiceRef,
		ClientID: g.ClientID, Expires: g.Expires, OpenUntil: now.Add(s.lease)})
	switch {
	case err != nil:
		s.o.Log.Error("console: claim token", "err", err)
		return g, nil, reasonInternal
	case !first:
		return g, nil, reasonUsed
	}
	svc, reason := s.claimed(ctx, g)
	switch reason {
	case "":
		return g, svc, ""
	case reasonLimit:
		s.releaseClaim(g.Nonce[:])
	default:
		s.endClaim(g.Nonce[:])
	}
	return g, nil, reason
}

// claimed checks a claimed token's service: still the client's, still allowed a console, and
// with room for one more open session, for the service and for the client.
func (s *Service) claimed(ctx context.Context, g Grant) (*models.Service, string) {
	svc, err := s.o.DB.GetServiceByRef(ctx, g.ServiceRef)
	if err != nil || svc.ClientID != g.ClientID {
		return nil, reasonForeign
	}
	if reason, p := s.refusal(ctx, svc); p != nil {
		return nil, reason
	}
	full, err := s.full(ctx, g.ClientID, g.ServiceRef, ownClaim)
	switch {
	case err != nil:
		s.o.Log.Error("console: count open sessions", "err", err)
		return nil, reasonInternal
	case full:
		return nil, reasonLimit
	}
	return svc, ""
}

// endClaim records that a claimed token's session is over (or never started), so that it no
// longer counts as open; the token stays used. A failure is logged: the claim then lapses with
// its lease.
func (s *Service) endClaim(nonce []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.o.DB.EndConsoleSession(ctx, nonce); err != nil {
		s.o.Log.Warn("console: record a session's end", "err", err)
	}
}

// releaseClaim deletes a claimed token's claim: nothing was opened, and the token may be
// opened again within its 60 s. A failure is logged: the claim then lapses with its lease.
func (s *Service) releaseClaim(nonce []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.o.DB.ReleaseConsoleClaim(ctx, nonce); err != nil {
		s.o.Log.Warn("console: release a refused claim", "err", err)
	}
}

// run relays a session to its end, then closes both sides and records it.
func (s *Service) run(ss *session) {
	s.wg.Add(1)
	defer s.wg.Done()
	s.track(ss)
	defer s.untrack(ss)
	started := s.o.Now()
	s.m.opened.WithLabelValues(string(ss.kind)).Inc()
	s.m.open.WithLabelValues(string(ss.kind)).Inc()
	// console.max_session ends it; a service changed ends it through the watcher or
	// OperationStarted.
	limit := time.AfterFunc(s.o.MaxSession, func() { ss.end(endMaxSession) })
	defer limit.Stop()
	// The browser's side as a stream. Its context is not the session's: cancelling it would
	// drop the connection before the close frame that tells the page why the session ended.
	bctx, bcancel := context.WithCancel(context.Background())
	browser := websocket.NetConn(bctx, ss.browser, websocket.MessageBinary)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ss.relay(browser) }()
	<-ss.ctx.Done()
	reason := ss.endReason()
	code := websocket.StatusNormalClosure
	switch reason {
	case endMaxSession:
		code = closeMaxSession
	case endServiceChanged:
		code = closeServiceChanged
	case endShutdown:
		code = websocket.StatusGoingAway
	}
	_ = ss.up.Conn.Close()
	_ = ss.browser.Close(code, reason)
	wg.Wait()
	bcancel()
	s.endClaim(ss.nonce)
	s.m.open.WithLabelValues(string(ss.kind)).Dec()
	s.m.ended.WithLabelValues(reason).Inc()
	s.m.duration.WithLabelValues(string(ss.kind)).Observe(s.o.Now().Sub(started).Seconds())
}

// relay greets the browser when the console needs it, then copies bytes both ways until one
// side stops; the session ends with the side that stopped first.
func (ss *session) relay(browser net.Conn) {
	if ss.up.Greet != nil {
		if err := ss.up.Greet(browser); err != nil {
			ss.end(endClosed)
			return
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		_, _ = io.CopyBuffer(browser, onlyReader{ss.up.Conn}, buf)
		ss.end(endUpstream)
	}()
	buf := make([]byte, 32<<10)
	_, _ = io.CopyBuffer(onlyWriter{ss.up.Conn}, onlyReader{browser}, buf)
	ss.end(endClosed)
	<-done
}

// onlyReader and onlyWriter hide io.ReaderFrom and io.WriterTo, so that io.CopyBuffer moves
// one read into one write (one WebSocket message) with the relay's buffer.
type onlyReader struct{ io.Reader }
type onlyWriter struct{ io.Writer }

// track adds a session to the ones End and the watcher reach; the first session starts the
// watcher.
func (s *Service) track(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.sessions[ss.key]
	if set == nil {
		set = map[*session]struct{}{}
		s.sessions[ss.key] = set
	}
	set[ss] = struct{}{}
	if s.stopWatch == nil {
		s.stopWatch = make(chan struct{})
		s.wg.Add(1)
		go s.watch(s.stopWatch)
	}
}

// untrack removes a session that ended; the last one's end stops the watcher.
func (s *Service) untrack(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.sessions[ss.key]
	delete(set, ss)
	if len(set) == 0 {
		delete(s.sessions, ss.key)
	}
	if len(s.sessions) == 0 && s.stopWatch != nil {
		close(s.stopWatch)
		s.stopWatch = nil
	}
}

// watch is the one watcher of this process's sessions (R41): every Recheck it re-reads the
// services of all open sessions, in one statement per models.ConsoleWatchChunk services, and
// ends the sessions whose service may no longer have a console (another replica suspended,
// limited, terminated, reinstalled or restored it; OperationStarted ends them at once when the
// operation starts here). It stops when stop is closed (no session left).
func (s *Service) watch(stop <-chan struct{}) {
	defer s.wg.Done()
	tick := time.NewTicker(s.o.Recheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.recheck()
		}
	}
}

// recheck renews the claims of the open sessions (they stay counted as open, on every
// replica), reads their services and ends the sessions whose service is gone, another
// client's, not active, or held by an operation that stops, destroys or replaces its guest. A
// database error is not a change: the sessions are checked again at the next tick.
func (s *Service) recheck() {
	byRef := s.openByRef()
	if len(byRef) == 0 {
		return
	}
	refs := slices.Sorted(maps.Keys(byRef))
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Recheck)
	defer cancel()
	var nonces [][]byte
	for _, list := range byRef {
		for _, ss := range list {
			nonces = append(nonces, ss.nonce)
		}
	}
	if err := s.o.DB.RenewConsoleSessions(ctx, nonces, s.o.Now().Add(s.lease)); err != nil {
		s.o.Log.Warn("console: renew the open sessions", "sessions", len(nonces), "err", err)
	}
	rows, err := s.o.DB.WatchConsoleServices(ctx, refs)
	if err != nil {
		s.o.Log.Warn("console: re-read the open sessions' services", "sessions", len(refs), "err", err)
		return
	}
	now := make(map[int64]models.ConsoleWatch, len(rows))
	for _, r := range rows {
		now[r.ID] = r
	}
	for ref, list := range byRef {
		r, found := now[ref]
		for _, ss := range list {
			if !found || r.ClientID != ss.client || r.State != models.ServiceActive || slices.Contains(endingActions, r.LockAction) {
				ss.end(endServiceChanged)
			}
		}
	}
}

// openByRef lists the open sessions by their service's internal id.
func (s *Service) openByRef() map[int64][]*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int64][]*session, len(s.sessions))
	for _, set := range s.sessions {
		for ss := range set {
			out[ss.ref] = append(out[ss.ref], ss)
		}
	}
	return out
}
