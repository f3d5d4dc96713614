package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"gorm.io/gorm"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server/config"
)

// watcherStatements records, while on, the statements that read the services table and the
// renewals of open sessions' claims. The watcher renews first in each round, so the renewals
// mark its rounds: a test counts statements per round, not per stretch of time.
type watcherStatements struct {
	mu   sync.Mutex
	on   bool
	seen []watcherStatement
}

// watcherStatement is one recorded statement; renewal marks the start of a watcher's round.
type watcherStatement struct {
	renewal bool
	sql     string
}

func (r *watcherStatements) record(tx *gorm.DB) {
	renewal := isRenewal(tx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on && (renewal || tx.Statement.Table == "services") {
		r.seen = append(r.seen, watcherStatement{renewal: renewal, sql: tx.Statement.SQL.String()})
	}
}

// isRenewal reports whether an update pushes open sessions' claims forward (ending a session
// sets them to 0). It is told by what is set, not by the SQL: a renewal that could not begin
// (SQLite's one connection busy past the round's deadline) has no SQL, yet it starts a round.
func isRenewal(tx *gorm.DB) bool {
	if tx.Statement.Table != "console_claims" {
		return false
	}
	set, _ := tx.Statement.Dest.(map[string]any)
	until, _ := set["open_until"].(int64)
	return until > 0
}

// renewals counts the recorded renewals.
func (r *watcherStatements) renewals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.seen {
		if s.renewal {
			n++
		}
	}
	return n
}

// servicesRead returns the statements that read services in the watcher's next n whole
// rounds: those between the first renewal recorded and the (n+1)th. A round already under way
// when the recording starts is left out, being seen only in part.
func (r *watcherStatements) servicesRead(t *testing.T, n int) []string {
	t.Helper()
	r.mu.Lock()
	r.on, r.seen = true, nil
	r.mu.Unlock()
	poll.Until(t, 10*time.Second, fmt.Sprintf("%d rounds of the watcher", n), func() bool { return r.renewals() > n })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	var stmts []string
	rounds := 0
	for _, s := range r.seen {
		if s.renewal {
			rounds++
			continue
		}
		if rounds >= 1 && rounds <= n {
			stmts = append(stmts, s.sql)
		}
	}
	return stmts
}

// One watcher per replica (R41), on both databases: six sessions on three services are
// re-checked by one statement a round naming the three services (not a read per session), a
// service changed in the database (as another replica would) ends its two sessions with 4001
// while the other four keep relaying, and once every session has closed the watcher stops.
func TestConsoleWatcherOneStatementPerTick(t *testing.T) {
	t.Parallel() // its own database, simulator and replica
	const recheck = 100 * time.Millisecond
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			sim := simtest.Start(t, nil)
			reads := &watcherStatements{}
			// The callbacks are registered before the executor starts reading (gorm's callbacks
			// are not to be changed while statements run).
			h := newServicesReplica(t, dbtest.Open(t, dialect), sim, &config.Console{Secret: consoleSecret}, "test-"+dialect, true,
				func(o *stack.Options) {
					o.ConsoleRecheck = recheck
					dbtest.After(t, o.DB, "test:watcher_statements", reads.record, dbtest.OnQuery, dbtest.OnRow, dbtest.OnUpdate)
				})
			conns := map[string][]*websocket.Conn{}
			for i := range 3 {
				id := fmt.Sprintf("watch-%d", i)
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
				for range 2 {
					c, _, err := dialConsole(t, h.openConsole(t, id, "", "terminal"))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = c.CloseNow() })
					readUntil(t, c, ":~# ")
					conns[id] = append(conns[id], c)
				}
			}
			const rounds = 5
			stmts := reads.servicesRead(t, rounds)
			if len(stmts) != rounds {
				t.Fatalf("%d statements read services in %d rounds of the watcher with 6 sessions open, want one a round: %q", len(stmts), rounds, stmts)
			}
			for _, s := range stmts {
				if strings.Count(s, "?") != 3 {
					t.Fatalf("a re-check statement that does not name the three services: %q", s)
				}
			}

			dbtest.Exec(t, h.db, "UPDATE services SET state = 'limited' WHERE service_id = 'watch-1'")
			for _, c := range conns["watch-1"] {
				if code := waitClose(t, c, 2*time.Second); code != 4001 {
					t.Fatalf("close code %d, want 4001", code)
				}
			}
			for _, id := range []string{"watch-0", "watch-2"} {
				for _, c := range conns[id] {
					if err := c.Write(t.Context(), websocket.MessageBinary, termInput("echo still-"+id+"\r")); err != nil {
						t.Fatal(err)
					}
					readUntil(t, c, "\r\nstill-"+id+"\r\n")
					_ = c.Close(websocket.StatusNormalClosure, "")
				}
			}
			if v := waitMetric(t, h.reg, "pvebill_console_sessions_open", "kind", "terminal", 0); v != 0 {
				t.Fatalf("sessions_open %v after every session closed", v)
			}
			// With no session left the watcher must end: Close, which has no session left to end,
			// waits for it (and for the relays, which have ended), so a watcher still running
			// keeps Close waiting.
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				h.st.Console.Close()
			}()
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				t.Fatal("the watcher still runs with no session open")
			}
		})
	}
}
