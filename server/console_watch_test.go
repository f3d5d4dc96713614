package server_test

import (
	"context"
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
	"pvebill/server/config"
)

// serviceReads records the statements that read the services table while on.
type serviceReads struct {
	mu   sync.Mutex
	on   bool
	stmt []string
}

func (r *serviceReads) record(tx *gorm.DB) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on && tx.Statement.Table == "services" {
		r.stmt = append(r.stmt, tx.Statement.SQL.String())
	}
}

// during returns the statements read during d.
func (r *serviceReads) during(d time.Duration) []string {
	r.mu.Lock()
	r.on, r.stmt = true, nil
	r.mu.Unlock()
	time.Sleep(d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.stmt
}

// One watcher per replica (R41), on both databases: six sessions on three services are
// re-checked by one statement a tick naming the three services (not a read per session), a
// service changed in the database (as another replica would) ends its two sessions with 4001
// while the other four keep relaying, and once every session has closed the watcher stops
// reading.
func TestConsoleWatcherOneStatementPerTick(t *testing.T) {
	const recheck = 100 * time.Millisecond
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			sim := simtest.Start(t, nil)
			reads := &serviceReads{}
			// The callbacks are registered before the executor starts reading (gorm's callbacks
			// are not to be changed while statements run).
			h := newServicesReplica(t, dbtest.Open(t, dialect), sim, &config.Console{Secret: consoleSecret}, "test-"+dialect, true,
				func(o *stack.Options) {
					o.ConsoleRecheck = recheck
					dbtest.After(t, o.DB, "test:service_reads", reads.record, dbtest.OnQuery, dbtest.OnRow)
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
			window := 10 * recheck
			stmts := reads.during(window)
			t.Logf("%d statements read services in %s with 6 sessions on 3 services open", len(stmts), window)
			if len(stmts) < 5 || len(stmts) > 11 {
				t.Fatalf("%d statements read services in %s with 6 sessions open, want one per %s tick: %q", len(stmts), window, recheck, stmts)
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
					if err := c.Write(context.Background(), websocket.MessageBinary, termInput("echo still-"+id+"\r")); err != nil {
						t.Fatal(err)
					}
					readUntil(t, c, "\r\nstill-"+id+"\r\n")
					_ = c.Close(websocket.StatusNormalClosure, "")
				}
			}
			if v := waitMetric(t, h.reg, "pvebill_console_sessions_open", "kind", "terminal", 0); v != 0 {
				t.Fatalf("sessions_open %v after every session closed", v)
			}
			if stmts := reads.during(5 * recheck); len(stmts) != 0 {
				t.Fatalf("the watcher still reads with no session open: %q", stmts)
			}
		})
	}
}
