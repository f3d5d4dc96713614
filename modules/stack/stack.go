package stack

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/modules/agent"
	"pvebill/modules/backups"
	"pvebill/modules/console"
	"pvebill/modules/executor"
	"pvebill/modules/ippool"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/migrate"
	"pvebill/modules/operation"
	"pvebill/modules/password"
	"pvebill/modules/placement"
	"pvebill/modules/plans"
	"pvebill/modules/power"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/qemu"
	"pvebill/modules/rdns"
	"pvebill/modules/readiness"
	"pvebill/modules/reinstall"
	"pvebill/modules/snapshots"
	"pvebill/server/config"
)

// Kinds is the one table of guest kinds this build provisions.
func Kinds() []kinds.Module { return []kinds.Module{lxc.New(), qemu.New()} }

// Options are the parts a Stack is built from. DB, Log and Metrics are required; Kinds may
// be empty (a build that offers no guest kind).
type Options struct {
	DB      *models.DB
	Log     *slog.Logger
	Metrics *prometheus.Registry
	// Executor tunes the workers; its Owner must be unique per replica.
	Executor executor.Config
	// Kinds are the guest modules (Kinds() in production; tests shorten their timeouts).
	Kinds []kinds.Module
	// Clusters are the Proxmox clusters guests live on.
	Clusters []kinds.Cluster
	// PlanClusters and PoolClusters are what plans and address pools may name (nil and empty:
	// any name, when no cluster is configured).
	PlanClusters plans.Clusters
	PoolClusters []string
	// Provision tunes the provisioner (its clock, Now, is also placement's and backups'); the wiring fills in
	// its dependencies. Its Addresses, when set, replaces the address pools as the source of
	// static addresses for provisioning and reinstalls (a test's stand-in).
	Provision provision.Options
	// Placement tunes placement (VMIDAttempts, SharedReadTTL); the wiring fills in the rest.
	Placement placement.Options
	// Actions are further executor actions (tests' probes).
	Actions []executor.Action
	// Console configures the customer's console (R41); its zero value turns it off.
	Console config.Console
	// PowerDNS is where reverse DNS records go (R55); nil turns reverse DNS off.
	PowerDNS *rdns.PowerDNS
	// ConsoleRecheck is how often the open console sessions' services are re-read (0: 3 s;
	// tests shorten it).
	ConsoleRecheck time.Duration
	// Agents is the agents' hub of the agent clusters (R57); nil: none.
	Agents *agent.Hub
}

// Stack is the domain, wired: every part the server and the jobs use.
type Stack struct {
	DB          *models.DB
	Log         *slog.Logger
	Metrics     *prometheus.Registry
	Exec        *executor.Executor
	Kinds       *kinds.Registry
	Clusters    []kinds.Cluster
	Plans       *plans.Service
	IPPools     *ippool.Service
	Guests      *operation.Guests
	Placement   *placement.Placer
	Provisioner *provision.Provisioner
	Power       *power.Service
	Snapshots   *snapshots.Service
	Backups     *backups.Service
	Replacer    *reinstall.Replacer
	Console     *console.Service
	Password    *password.Service
	RDNS        *rdns.Service
	Agents      *agent.Hub
	Moves       *migrate.Service
	Readiness   *readiness.Checker
}

// New wires a stack: the executor, the kinds' registry, plans with the capabilities the kinds
// declare, address pools, the provisioner and the replacer, their actions registered.
func New(o Options) *Stack {
	st := &Stack{DB: o.DB, Log: o.Log, Metrics: o.Metrics, Clusters: o.Clusters, Agents: o.Agents}
	ec := o.Executor
	if ec.TaskObserver == nil {
		ec.TaskObserver = pve.WithTaskObserver
	}
	st.Exec = executor.New(o.DB, ec, o.Log, executor.NewMetrics(o.Metrics), o.Actions...)
	st.Kinds = kinds.NewRegistry(o.Kinds...)
	st.Plans = plans.NewService(o.DB, plans.Options{Clusters: o.PlanClusters, Built: st.Kinds.Built(),
		Storages: storages(o.Clusters), ConsoleUsers: consoleUsers(o.Clusters), NoConsoleSecret: !o.Console.Enabled()})
	warnHalfConsole(o.Log, o.Console, o.Clusters)
	st.IPPools = ippool.NewService(o.DB).WithClusters(o.PoolClusters)
	st.RDNS = rdns.NewService(rdns.Options{DB: o.DB, PowerDNS: o.PowerDNS, Log: o.Log, Metrics: rdns.NewMetrics(o.Metrics, o.DB, nil)})
	po := o.Provision
	addrs := po.Addresses
	if addrs == nil {
		addrs = provision.IPPools(st.IPPools)
	}
	po.DB, po.Plans, po.Modules, po.Clusters, po.Addresses = o.DB, st.Plans, st.Kinds, o.Clusters, addrs
	po.Secrets, po.Log, po.Metrics = st.Exec.Secrets(), o.Log, provision.NewMetrics(o.Metrics)
	if po.RDNS == nil {
		po.RDNS = st.RDNS
	}
	if po.Now == nil {
		po.Now = time.Now
	}
	pl := o.Placement
	pl.DB, pl.Plans, pl.Clusters, pl.Log, pl.Metrics, pl.Now = o.DB, st.Plans, o.Clusters, o.Log, placement.NewMetrics(o.Metrics), po.Now
	st.Placement = placement.New(pl)
	st.Guests = operation.NewGuests(o.DB, st.Kinds, o.Clusters, o.Log)
	st.Backups = backups.New(backups.Options{DB: o.DB, Plans: st.Plans, Guests: st.Guests, Log: o.Log,
		Metrics: backups.NewMetrics(o.Metrics), Now: po.Now})
	po.Placement, po.Guests, po.Backups = st.Placement, st.Guests, st.Backups
	st.Provisioner = provision.New(po)
	st.Power = power.New(power.Options{DB: o.DB, Guests: st.Guests})
	st.Snapshots = snapshots.New(snapshots.Options{DB: o.DB, Plans: st.Plans, Guests: st.Guests})
	st.Readiness = readiness.New(readiness.Options{Clusters: o.Clusters, Log: o.Log, Metrics: o.Metrics, Now: po.Now})
	backups.NewBackupMetrics(o.Metrics, o.DB, o.Log)
	nodes := map[string][]string{}
	for _, cl := range o.Clusters {
		nodes[cl.Name] = cl.Nodes
	}
	backups.NewBackupQueueMetrics(o.Metrics, o.DB, o.Log, nodes)
	st.Replacer = reinstall.New(reinstall.Options{DB: o.DB, Plans: st.Plans, Modules: st.Kinds, Clusters: o.Clusters,
		Addresses: addrs, Secrets: st.Exec.Secrets(), Log: o.Log, Backups: st.Backups})
	st.Password = password.New(password.Options{DB: o.DB, Plans: st.Plans, Guests: st.Guests,
		Secrets: st.Exec.Secrets(), Log: o.Log})
	st.Moves = migrate.New(migrate.Options{DB: o.DB, Guests: st.Guests, Placement: st.Placement, Log: o.Log})
	for _, a := range st.Actions() {
		st.Exec.Register(a)
	}
	st.Console = console.New(console.Options{DB: o.DB, Opener: console.NewGuestOpener(st.Guests, st.Plans), Log: o.Log, Secret: o.Console.Secret,
		PublicURL: o.Console.PublicURL, MaxSession: o.Console.MaxSession, Recheck: o.ConsoleRecheck,
		MaxPerService: o.Console.MaxSessionsPerService, MaxPerClient: o.Console.MaxSessionsPerClient,
		Metrics: console.NewMetrics(o.Metrics)})
	st.Exec.OnStart(st.Console.OperationStarted)
	return st
}

// consoleUsers tells the plans which clusters have a console user (R41): a cluster pvebill
// does not know has none.
func consoleUsers(clusters []kinds.Cluster) plans.ConsoleUsers {
	return func(name string) bool {
		for _, cl := range clusters {
			if cl.Name == name {
				return cl.Client != nil && cl.Client.HasConsoleUser()
			}
		}
		return false
	}
}

// warnHalfConsole says at start-up that the console is configured by halves (R41): clusters
// with a console user, but no console.secret to sign console URLs with, so the console is
// refused on every plan. The warning names the missing key.
func warnHalfConsole(log *slog.Logger, c config.Console, clusters []kinds.Cluster) {
	if c.Enabled() {
		return
	}
	var with []string
	for _, cl := range clusters {
		if cl.Client != nil && cl.Client.HasConsoleUser() {
			with = append(with, cl.Name)
		}
	}
	if len(with) > 0 {
		log.Warn("console: clusters have a console_user but console.secret is not set: the console is refused on every plan",
			"missing", "console.secret", "clusters", with)
	}
}

// Actions are every operation action the flows run, as the executor registers them.
func (st *Stack) Actions() []executor.Action {
	actions := append(st.Provisioner.Actions(), st.Power.Actions()...)
	actions = append(actions, st.Snapshots.Actions()...)
	actions = append(actions, st.Backups.Actions()...)
	actions = append(actions, st.Replacer.Actions()...)
	actions = append(actions, st.Moves.Actions()...)
	return append(actions, st.Password.Actions()...)
}

// Schema says what Open does with a schema that is behind.
type Schema int

// The two ways to meet a schema that is behind.
const (
	// RequireSchema refuses it: `pvebill migrate` brings it up to date (a configured database).
	RequireSchema Schema = iota
	// MigrateSchema applies the pending migrations (the embedded SQLite default).
	MigrateSchema
)

// Open opens the configured database: with MigrateSchema pending migrations are applied;
// with RequireSchema a schema that is behind is refused.
func Open(ctx context.Context, cfg config.Config, schema Schema) (*models.DB, error) {
	db, err := models.Open(cfg.Database.Driver, cfg.Database.DSN, cfg.Database.Failover...)
	if err != nil {
		return nil, err
	}
	if schema == MigrateSchema {
		if _, err := db.Migrate(ctx); err != nil {
			return nil, closing(db, err)
		}
	}
	if err := db.CheckSchema(ctx); err != nil {
		return nil, closing(db, err)
	}
	return db, nil
}

// closing closes db after a failure and returns the failure.
func closing(db *models.DB, err error) error {
	if cerr := db.Close(); cerr != nil {
		return fmt.Errorf("%w (and closing the database: %w)", err, cerr)
	}
	return err
}

// AgentHub is the hub of the clusters configured with an agent (R57), its metrics on reg; the
// replica names itself with owner in the handshake. With peering configured, the replicas share
// their tunnels through db's route table.
func AgentHub(cfg config.Config, db *models.DB, reg prometheus.Registerer, log *slog.Logger, owner string) (*agent.Hub, error) {
	keys := map[string]ed25519.PublicKey{}
	for _, c := range cfg.Clusters {
		if c.Agent == nil {
			continue
		}
		k, err := agent.ParsePublicKey(c.Agent.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: agent.public_key: %w", c.Name, err)
		}
		keys[c.Name] = k
	}
	o := agent.HubOptions{Keys: keys, Log: log.With("component", "agent"), Metrics: agent.NewMetrics(reg), Replica: owner}
	if db != nil && len(keys) > 0 {
		// Counting the live replicas for the agents also keeps this one counted among them.
		o.LiveReplicas = func(ctx context.Context) (int, error) {
			if err := db.Heartbeat(ctx, owner, agentRouteFresh); err != nil {
				return 0, err
			}
			return db.LiveReplicas(ctx)
		}
	}
	if cfg.Peering.Enabled() && db != nil && len(keys) > 0 {
		o.Peering = &agent.Peering{URL: cfg.Peering.URL, Secret: []byte(cfg.Peering.Secret), Routes: models.AgentRouteTable{DB: db, Fresh: agentRouteFresh}}
	}
	return agent.NewHub(o), nil
}

// agentRouteFresh is how long a replica's record of its tunnels counts: three of its refreshes.
const agentRouteFresh = 15 * time.Second

// Clusters builds one Proxmox client per configured cluster, their metrics on reg; an agent
// cluster's client sends its calls through hub.
func Clusters(cfg config.Config, reg prometheus.Registerer, hub *agent.Hub) ([]kinds.Cluster, error) {
	if len(cfg.Clusters) == 0 {
		return nil, nil
	}
	m := pve.NewMetrics(reg)
	out := make([]kinds.Cluster, 0, len(cfg.Clusters))
	for _, c := range cfg.Clusters {
		pc := pve.Config{Cluster: c.Name, URL: c.URL, TokenID: c.TokenID, TokenSecret: c.TokenSecret,
			ConsoleUser: c.ConsoleUser, ConsolePassword: c.ConsolePassword,
			Fingerprint: c.Fingerprint, InsecureSkipVerify: c.InsecureSkipVerify}
		if c.Agent != nil {
			pc = pve.Config{Cluster: c.Name, Tunnel: hub.Transport(c.Name)}
		}
		client, err := pve.New(pc, m)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		out = append(out, kinds.Cluster{Name: c.Name, Client: client, Nodes: append([]string(nil), c.Nodes...),
			MemoryOvercommit: c.Overcommit()})
	}
	return out, nil
}

// storages reads a plan's cluster's storage configuration (one GET /storage, within a few
// seconds) for the plan's backup storage check (R42) and its storage type (R44). A cluster
// pvebill does not know has none.
func storages(clusters []kinds.Cluster) plans.Storages {
	return func(ctx context.Context, name string) ([]plans.Storage, error) {
		out := []plans.Storage{}
		for _, cl := range clusters {
			if cl.Name != name || cl.Client == nil {
				continue
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			stores, err := cl.Client.StorageConfigs(ctx)
			if err != nil {
				return nil, err
			}
			for _, st := range stores {
				out = append(out, plans.Storage{ID: st.Storage, Type: st.Type,
					Backups: st.Holds("backup") && !bool(st.Disable)})
			}
		}
		return out, nil
	}
}
