package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/modules/agent"
	"pvebill/modules/backups"
	"pvebill/modules/executor"
	"pvebill/modules/migrate"
	"pvebill/modules/placement"
	"pvebill/modules/power"
	"pvebill/modules/snapshots"
	"pvebill/server/config"
)

// Options are the server's injected dependencies. DB, Executor, Registry, Logger and the
// services are required: New panics without one, at wiring time, rather than a route failing
// on its first request.
type Options struct {
	Config   config.Config
	DB       *models.DB
	Executor *executor.Executor
	Registry *prometheus.Registry
	Logger   *slog.Logger
	OpenAPI  []byte
	Now      func() time.Time
	// WaitRecheck is how often a long-poll re-reads an operation finished by another replica.
	WaitRecheck time.Duration
	// Plans serves the plan routes.
	Plans Plans
	// Provision serves the service lifecycle routes and the guest list.
	Provision Lifecycle
	// Readiness answers /readyz's clusters from the last background check (R50).
	Readiness Readiness
	// Reinstall serves the reinstall routes and the admin reconcile route.
	Reinstall Reinstall
	// IPPools serves the IP pool routes.
	IPPools IPPools
	// Console serves the console routes (R41).
	Console Console
	// Password serves the password route (R56).
	Password Password
	// RDNS serves the reverse DNS routes (R55).
	RDNS RDNS
	// Agents serves the agents' endpoint and lists each agent cluster's agents on /readyz
	// (R57); nil: no agent endpoint.
	Agents *agent.Hub
	// Moves serves the admin migration and node maintenance routes (R52, R53).
	Moves Moves
	// Nodes serves the admin node view (R52).
	Nodes Nodes
	// Power serves the power routes (R40).
	Power Power
	// Snapshots serves the snapshot routes (R44).
	Snapshots Snapshots
	// Backups serves the backup routes (R42).
	Backups Backups
}

// Readiness is what /readyz needs of the clusters' background check (modules/readiness).
type Readiness interface {
	Readiness(ctx context.Context) map[string]any
}

// Moves is what the migration and maintenance routes need (modules/migrate).
type Moves interface {
	Migrate(ctx context.Context, k models.ServiceKey, req migrate.Request) (*models.Operation, error)
	SetMaintenance(ctx context.Context, cluster, node string, req migrate.MaintenanceRequest) ([]*models.Operation, error)
}

// Nodes is what the admin node view needs (modules/placement).
type Nodes interface {
	Nodes(ctx context.Context, cluster string) ([]placement.NodeView, error)
}

// Power is what the power routes need (modules/power).
type Power interface {
	Start(ctx context.Context, clientID, serviceID string) (*models.Operation, error)
	Stop(ctx context.Context, clientID, serviceID string) (*models.Operation, error)
	Shutdown(ctx context.Context, clientID, serviceID string, req power.ShutdownRequest) (*models.Operation, error)
	Reboot(ctx context.Context, clientID, serviceID string) (*models.Operation, error)
}

// Backups is what the backup routes need (modules/backups).
type Backups interface {
	Backup(ctx context.Context, clientID, serviceID string, req backups.BackupRequest) (*models.Operation, error)
	Backups(ctx context.Context, clientID, serviceID string) ([]backups.Backup, error)
	DeleteBackup(ctx context.Context, clientID, serviceID, backupID string) (*models.Operation, error)
}

// Snapshots is what the snapshot routes need (modules/snapshots).
type Snapshots interface {
	Snapshots(ctx context.Context, clientID, serviceID string) (snapshots.SnapshotList, error)
	CreateSnapshot(ctx context.Context, clientID, serviceID string, req snapshots.SnapshotRequest) (*models.Operation, error)
	DeleteSnapshot(ctx context.Context, clientID, serviceID, name string) (*models.Operation, error)
	RollbackSnapshot(ctx context.Context, clientID, serviceID, name string, req snapshots.RollbackRequest) (*models.Operation, error)
}

// missing names the required dependencies o lacks.
func (o Options) missing() []string {
	var out []string
	for name, absent := range map[string]bool{"DB": o.DB == nil, "Executor": o.Executor == nil,
		"Registry": o.Registry == nil, "Logger": o.Logger == nil, "Plans": o.Plans == nil,
		"Provision": o.Provision == nil, "Reinstall": o.Reinstall == nil, "IPPools": o.IPPools == nil,
		"Console": o.Console == nil, "Password": o.Password == nil, "RDNS": o.RDNS == nil,
		"Moves": o.Moves == nil, "Readiness": o.Readiness == nil, "Nodes": o.Nodes == nil,
		"Power": o.Power == nil, "Snapshots": o.Snapshots == nil, "Backups": o.Backups == nil} {
		if absent {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Server is pvebill's HTTP server.
type Server struct {
	cfg      config.Config
	db       *models.DB
	exec     *executor.Executor
	reg      *prometheus.Registry
	log      *slog.Logger
	openapi  []byte
	clients  APIClients
	now      func() time.Time
	recheck  time.Duration
	engine   *gin.Engine
	metrics  *httpMetrics
	httpSrv  *http.Server
	maxWait  time.Duration
	draining chan struct{}
	plans    Plans
	prov     Lifecycle
	reinst   Reinstall
	ipPools  IPPools
	console  Console
	password Password
	rdns     RDNS
	agents   *agent.Hub
	moves    Moves
	nodes    Nodes
	snaps    Snapshots
	backups  Backups
	power    Power
	ready    Readiness
	// schemaOK is set once /readyz found the schema current; it stays current (migrations are
	// only ever added), so the check is not repeated.
	schemaOK atomic.Bool
	// transport lists the insecure transport settings, logged at start and shown in readiness.
	transport []config.Warning
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New builds the server and its route table. It panics when a required dependency is missing
// (see Options): a wiring mistake, found when the process starts.
func New(o Options) *Server {
	if m := o.missing(); len(m) > 0 {
		panic("server.New: missing " + strings.Join(m, ", "))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WaitRecheck <= 0 {
		o.WaitRecheck = time.Second
	}
	if o.Agents == nil {
		o.Agents = agent.NewHub(agent.HubOptions{Log: o.Logger}) // no agent cluster: every agent is refused
	}
	s := &Server{cfg: o.Config, db: o.DB, exec: o.Executor, reg: o.Registry, log: o.Logger, openapi: o.OpenAPI,
		clients: NewClients(o.Config.Clients), now: o.Now, recheck: o.WaitRecheck, maxWait: 60 * time.Second,
		draining: make(chan struct{}), plans: o.Plans, ipPools: o.IPPools, prov: o.Provision, reinst: o.Reinstall,
		console: o.Console, password: o.Password, rdns: o.RDNS, agents: o.Agents, moves: o.Moves, ready: o.Readiness, nodes: o.Nodes, power: o.Power,
		snaps: o.Snapshots, backups: o.Backups}
	s.transport = o.Config.TransportWarnings()
	for _, w := range s.transport {
		s.log.Warn("insecure transport setting", "key", w.Key, "reason", w.Reason)
	}
	s.metrics = newHTTPMetrics(o.Registry)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.Use(requestIDMiddleware(), logMiddleware(s.log), recoveryMiddleware(s.log), s.metrics.middleware())
	s.engine = e
	s.routes()
	return s
}

// V1 returns a signed route group for /v1 with the standard middleware, for routes registered
// outside routes.go (the tests' actions, the benchmark's).
func (s *Server) V1(scopes ...string) *gin.RouterGroup {
	return s.engine.Group("/v1", bodyMiddleware(), s.authMiddleware(), requireScope(scopes...), queryMiddleware, s.idempotencyMiddleware())
}

// ServeHTTP lets the server be used as an http.Handler (httptest).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Serve answers on ln until Shutdown: HTTPS when tls.cert_file and tls.key_file are set,
// plain HTTP otherwise.
func (s *Server) Serve(ln net.Listener) error {
	s.httpSrv = &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.maxWait + 15*time.Second, // long-polls hold up to 60 s
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	var err error
	if s.cfg.TLS.CertFile != "" {
		s.httpSrv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		err = s.httpSrv.ServeTLS(ln, s.cfg.TLS.CertFile, s.cfg.TLS.KeyFile)
	} else {
		err = s.httpSrv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown drains HTTP: readiness turns false, then in-flight requests finish until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	select {
	case <-s.draining:
	default:
		close(s.draining)
	}
	if s.httpSrv == nil {
		s.console.Close()
		return nil
	}
	err := s.httpSrv.Shutdown(ctx)
	// Console sessions are hijacked connections, which Shutdown does not wait for.
	s.console.Close()
	return err
}
