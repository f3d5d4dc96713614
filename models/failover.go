package models

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// A replica may name several database nodes (a MariaDB Galera cluster), in the order it prefers
// them (R51). The pool's connections are made by a nodeSet: each new connection goes to the
// first node, in that order, that answers and is ready, meaning wsrep_ready=ON and
// wsrep_local_state_comment=Synced (a server without Galera has neither and is always ready).
// A node that lost quorum, is still joining or serves as a donor is left for the next one. A
// monitor probes the nodes every second; when the node in use changes, every connection to the
// old one is dropped at its next use, so the pool moves over as a whole.

// nodeProbeInterval is how often the monitor probes the nodes.
const nodeProbeInterval = time.Second

// NodeState is what a replica knows of one database node.
type NodeState struct {
	Addr   string `json:"addr"`
	Ready  bool   `json:"ready"`
	State  string `json:"state"`           // Synced, Donor/Desynced, Joining, ..., unreachable; "" without Galera
	InUse  bool   `json:"in_use"`          // the node new connections go to
	Reason string `json:"error,omitempty"` // why it is not ready
}

type dbNode struct {
	addr string
	conn driver.Connector
}

type nodeSet struct {
	nodes []dbNode
	gen   atomic.Uint64 // bumped each time the node in use changes

	mu      sync.Mutex
	current int // index of the node in use, -1 before the first connection
	states  []NodeState

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// newNodeSet parses the DSNs (already completed with the pool's parameters).
func newNodeSet(dsns []string) (*nodeSet, error) {
	s := &nodeSet{current: -1, states: make([]NodeState, len(dsns)), stop: make(chan struct{}), done: make(chan struct{})}
	for i, d := range dsns {
		cfg, err := mysqldrv.ParseDSN(d)
		if err != nil {
			return nil, fmt.Errorf("database node %d: %w", i+1, err)
		}
		c, err := mysqldrv.NewConnector(cfg)
		if err != nil {
			return nil, fmt.Errorf("database node %d: %w", i+1, err)
		}
		s.nodes = append(s.nodes, dbNode{addr: cfg.Addr, conn: c})
		s.states[i] = NodeState{Addr: cfg.Addr, State: "unknown"}
	}
	go s.monitor()
	return s, nil
}

// Connect implements driver.Connector: a connection to the first ready node.
func (s *nodeSet) Connect(ctx context.Context) (driver.Conn, error) {
	var errs []error
	for i := range s.nodes {
		c, st := s.dial(ctx, i)
		s.record(i, st)
		if c == nil {
			errs = append(errs, fmt.Errorf("%s: %s", st.Addr, st.Reason))
			continue
		}
		return &nodeConn{Conn: c, set: s, gen: s.use(i)}, nil
	}
	return nil, fmt.Errorf("no ready database node: %w", errors.Join(errs...))
}

// Driver implements driver.Connector.
func (s *nodeSet) Driver() driver.Driver { return &mysqldrv.MySQLDriver{} }

// Close stops the monitor (sql.DB.Close calls it); closing twice is harmless.
func (s *nodeSet) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// dial connects to node i and probes it; the connection is nil (and closed) when the node is
// unreachable or not ready.
func (s *nodeSet) dial(ctx context.Context, i int) (driver.Conn, NodeState) {
	st := NodeState{Addr: s.nodes[i].addr}
	c, err := s.nodes[i].conn.Connect(ctx)
	if err != nil {
		st.State, st.Reason = "unreachable", err.Error()
		return nil, st
	}
	st = probe(ctx, c, st)
	if !st.Ready {
		_ = c.Close() // a node that is not ready keeps no connection of ours
		return nil, st
	}
	return c, st
}

// probe reads the node's wsrep status on c. A server with wsrep_on off (or without it: no
// Galera) is ready when it answers.
func probe(ctx context.Context, c driver.Conn, st NodeState) NodeState {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		st.State, st.Reason = "unknown", "the driver cannot query"
		return st
	}
	on, err := showVars(ctx, q, "SHOW GLOBAL VARIABLES WHERE Variable_name = 'wsrep_on'")
	if err == nil && on["wsrep_on"] == "ON" {
		var vars map[string]string
		vars, err = showVars(ctx, q, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment')")
		st.State = vars["wsrep_local_state_comment"]
		switch {
		case err != nil:
		case vars["wsrep_ready"] != "ON":
			st.Reason = "wsrep_ready=" + vars["wsrep_ready"]
		case st.State != "Synced":
			st.Reason = "not Synced"
		default:
			st.Ready = true
		}
	} else if err == nil {
		st.Ready = true // one server without Galera
	}
	if err != nil {
		st.State, st.Reason = "unreachable", err.Error()
	}
	return st
}

// showVars runs a SHOW ... VARIABLES/STATUS statement and returns its name/value pairs, names in
// lower case.
func showVars(ctx context.Context, q driver.QueryerContext, stmt string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, stmt, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	vars := map[string]string{}
	row := make([]driver.Value, 2)
	for rows.Next(row) == nil {
		vars[strings.ToLower(asString(row[0]))] = asString(row[1])
	}
	return vars, nil
}

func asString(v driver.Value) string {
	switch t := v.(type) {
	case []byte:
		return string(t)
	case string:
		return t
	}
	return fmt.Sprint(v)
}

// use makes node i the node in use and returns the generation its connections carry.
func (s *nodeSet) use(i int) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != i {
		s.current = i
		s.gen.Add(1)
	}
	for j := range s.states {
		s.states[j].InUse = j == i
	}
	return s.gen.Load()
}

func (s *nodeSet) record(i int, st NodeState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.InUse = i == s.current
	s.states[i] = st
}

// monitor probes the nodes up to the one in use (a node preferred to it may be back, the one in
// use may have left the cluster's primary component) and moves the pool when the first ready
// node is another one.
func (s *nodeSet) monitor() {
	defer close(s.done)
	t := time.NewTicker(nodeProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.probeAll()
		}
	}
}

func (s *nodeSet) probeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), nodeProbeInterval)
	defer cancel()
	for i := range s.nodes {
		c, st := s.dial(ctx, i)
		s.record(i, st)
		if c != nil {
			_ = c.Close()
			s.use(i)
			return
		}
	}
}

// Nodes returns what the replica knows of each node, in the configured order.
func (s *nodeSet) Nodes() []NodeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]NodeState(nil), s.states...)
}

// nodeConn is a connection to one node, tagged with the generation it was made in; once the pool
// moved to another node it is no longer reused.
type nodeConn struct {
	driver.Conn
	set *nodeSet
	gen uint64
}

func (c *nodeConn) stale() bool { return c.gen != c.set.gen.Load() }

// IsValid implements driver.Validator: a stale connection is not put back into the pool.
func (c *nodeConn) IsValid() bool {
	if c.stale() {
		return false
	}
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// ResetSession implements driver.SessionResetter: a stale connection is not reused.
func (c *nodeConn) ResetSession(ctx context.Context) error {
	if c.stale() {
		return driver.ErrBadConn
	}
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// The driver's optional interfaces, passed through.

// BeginTx implements driver.ConnBeginTx.
func (c *nodeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *nodeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

// ExecContext implements driver.ExecerContext.
func (c *nodeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

// QueryContext implements driver.QueryerContext.
func (c *nodeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

// Ping implements driver.Pinger.
func (c *nodeConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

// CheckNamedValue implements driver.NamedValueChecker.
func (c *nodeConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

var _ io.Closer = (*nodeSet)(nil)
