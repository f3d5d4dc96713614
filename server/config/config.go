package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"pvebill/modules/agent"
	"pvebill/modules/validation"
)

// Config is the whole configuration. The yaml keys are fixed by docs/api.md.
type Config struct {
	Listen    string     `yaml:"listen"`
	LogFormat string     `yaml:"log_format"`
	LogLevel  string     `yaml:"log_level"`
	Database  Database   `yaml:"database"`
	Clients   []Client   `yaml:"clients"`
	Clusters  []Cluster  `yaml:"clusters"`
	PlansFile string     `yaml:"plans_file"`
	IPPools   []IPPool   `yaml:"ip_pools"`
	Jobs      Jobs       `yaml:"jobs"`
	Usage     Usage      `yaml:"usage"`
	Executor  Executor   `yaml:"executor"`
	Metrics   MetricsCfg `yaml:"metrics"`
	TLS       TLS        `yaml:"tls"`
	Console   Console    `yaml:"console"`
	DNS       DNS        `yaml:"dns"`
	Peering   Peering    `yaml:"peering"`
}

// Peering lets replicas reach the agent clusters whose agent is connected to another replica
// (R57): a replica without a tunnel forwards a call one hop to a replica that has one. Off while
// url is empty (one replica, or every agent holding a tunnel to every replica).
type Peering struct {
	// URL is where the other replicas reach this one (scheme, host, port; no path): each replica
	// has its own, on its own listener.
	URL string `yaml:"url"`
	// Secret authenticates the calls one replica forwards to another (an HMAC key of at least
	// MinPeeringSecret characters, the same on every replica). Never logged or stored.
	Secret string `yaml:"secret"`
}

// MinPeeringSecret is the shortest peering.secret accepted: 32 characters.
const MinPeeringSecret = 32

// Enabled reports whether this replica forwards to and accepts from its peers.
func (p Peering) Enabled() bool { return p.URL != "" }

// DNS configures reverse DNS (R55): PTR records are written through PowerDNS's HTTP API. Off
// while dns.powerdns.url is empty: PUT /v1/services/{id}/rdns then answers capability_refused.
type DNS struct {
	PowerDNS PowerDNS `yaml:"powerdns"`
}

// PowerDNS is the PowerDNS authoritative server the PTR records go to.
type PowerDNS struct {
	// URL is the server's base URL (http://127.0.0.1:8081); pvebill adds
	// /api/v1/servers/{server_id}/….
	URL string `yaml:"url"`
	// APIKey is sent as X-API-Key. A secret: never logged, stored or shown in an error.
	APIKey string `yaml:"api_key"`
	// ServerID is the API's server id (default "localhost", what PowerDNS calls itself).
	ServerID string `yaml:"server_id"`
}

// DefaultPowerDNSServerID is dns.powerdns.server_id when it is not set.
const DefaultPowerDNSServerID = "localhost"

// Enabled reports whether reverse DNS is configured.
func (p PowerDNS) Enabled() bool { return p.URL != "" }

// Console configures the customer's browser console (R41). It is off while Secret is empty:
// POST /v1/services/{id}/console then answers capability_refused, naming console.secret.
type Console struct {
	// PublicURL is where browsers reach pvebill's /console pages (scheme, host and an optional
	// path prefix, without a trailing slash): the one-time URLs start with it. Empty: the
	// scheme and host the billing system's request came to.
	PublicURL string `yaml:"public_url"`
	// Secret is the HMAC key of the one-time console tokens (at least MinConsoleSecret
	// characters). Every replica needs the same one.
	Secret string `yaml:"secret"`
	// MaxSession ends a console session after this long (default 2h).
	MaxSession time.Duration `yaml:"max_session"`
	// MaxSessionsPerService and MaxSessionsPerClient bound the console sessions open at once,
	// on every replica, for one service (default 2) and for one client (default 20); one more
	// is refused with 429 console_session_limit.
	MaxSessionsPerService int `yaml:"max_sessions_per_service"`
	MaxSessionsPerClient  int `yaml:"max_sessions_per_client"`
}

// Enabled reports whether the console is configured.
func (c Console) Enabled() bool { return c.Secret != "" }

// DefaultConsoleMaxSession is how long a console session lasts when console.max_session is 0.
const DefaultConsoleMaxSession = 2 * time.Hour

// MinConsoleSecret is the shortest console.secret accepted: 32 characters.
const MinConsoleSecret = 32

// TLS makes the server answer HTTPS itself: both files set, or neither (plain HTTP, for a
// listener behind a TLS-terminating proxy).
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Database selects the storage driver.
type Database struct {
	Driver string `yaml:"driver"` // mysql | sqlite
	DSN    string `yaml:"dsn"`
	// Failover names further database nodes (mysql: the other nodes of a Galera cluster),
	// tried in order when the ones before are unreachable or not ready (R51).
	Failover []string `yaml:"failover"`
}

// Client is one API client: its id, HMAC secret and scopes.
type Client struct {
	ID     string `yaml:"id"`
	Secret string `yaml:"secret"`
	// SecretFile names a file holding the secret instead (relative to the config file; trailing
	// white space is dropped), for secrets generated into a volume or mounted by an orchestrator.
	// Secret and SecretFile are exclusive.
	SecretFile string   `yaml:"secret_file,omitempty"`
	Scopes     []string `yaml:"scopes"`
	// CallbackURL, when set, receives a signed event each time one of this client's operations
	// ends; CallbackSecret is the HMAC key of those events (required with a URL).
	CallbackURL    string `yaml:"callback_url,omitempty"`
	CallbackSecret string `yaml:"callback_secret,omitempty"`
}

// Cluster is one Proxmox VE cluster.
type Cluster struct {
	Name               string   `yaml:"name"`
	URL                string   `yaml:"url"`
	TokenID            string   `yaml:"token_id"`
	TokenSecret        string   `yaml:"token_secret"`
	Fingerprint        string   `yaml:"fingerprint"`
	InsecureSkipVerify bool     `yaml:"insecure_skip_verify"`
	Nodes              []string `yaml:"nodes"`
	// ConsoleUser is the Proxmox user (user@realm, not a token) holding only VM.Console whose
	// ticket opens consoles (R41); ConsolePassword is its password, a secret. Both or neither.
	ConsoleUser     string `yaml:"console_user,omitempty"`
	ConsolePassword string `yaml:"console_password,omitempty"`
	// MemoryOvercommit multiplies each node's memory for placement (R52): a number of at least
	// 1.0; unset is 1.0 (no overcommit).
	MemoryOvercommit *float64 `yaml:"memory_overcommit,omitempty"`
	// Agent reaches the cluster through an agent (R57) instead of url and the credentials, which
	// the agent holds.
	Agent *ClusterAgent `yaml:"agent,omitempty"`
}

// ClusterAgent is the agent of a cluster: its public key, "ed25519:<base64>".
type ClusterAgent struct {
	PublicKey string `yaml:"public_key"`
}

// Overcommit is the cluster's memory_overcommit with its default (1.0) filled in.
func (c Cluster) Overcommit() float64 {
	if c.MemoryOvercommit == nil {
		return 1.0
	}
	return *c.MemoryOvercommit
}

// IPPool is an IP pool declared in the config file: IPv4 with first/last, or IPv6 with
// assign_prefix (R54).
type IPPool struct {
	Name         string   `yaml:"name"`
	Cluster      string   `yaml:"cluster"`
	Bridge       string   `yaml:"bridge"`
	CIDR         string   `yaml:"cidr"`
	Gateway      string   `yaml:"gateway"`
	First        string   `yaml:"first"`
	Last         string   `yaml:"last"`
	AssignPrefix *int     `yaml:"assign_prefix"`
	Nameservers  []string `yaml:"nameservers"`
	ReverseZone  string   `yaml:"reverse_zone"`
}

// Jobs holds the cron schedules.
type Jobs struct {
	SwapSampling string `yaml:"swap_sampling"`
	Limits       string `yaml:"limits"`
	// SwapSamplingConcurrency is the most sampler calls in flight per node (default 2: Proxmox
	// serves them through pvedaemon's 3 workers, shared with provisioning).
	SwapSamplingConcurrency int `yaml:"swap_sampling_concurrency"`
	// UsageRetention is how long 5-minute usage buckets are kept. Deprecated: use
	// usage.retention_5m; it is read only when that key is not set.
	UsageRetention time.Duration `yaml:"usage_retention"`
	// ReadinessInterval is how often each cluster is checked for /readyz in the background
	// (default 15s, R50).
	ReadinessInterval time.Duration `yaml:"readiness_interval"`
}

// Usage holds how long each usage tier is kept (R45); zero is the tier's default.
type Usage struct {
	Retention5m time.Duration `yaml:"retention_5m"`
	Retention1h time.Duration `yaml:"retention_1h"`
	Retention1d time.Duration `yaml:"retention_1d"`
}

// Default retentions of the usage tiers.
const (
	DefaultRetention5m = 35 * 24 * time.Hour
	DefaultRetention1h = 400 * 24 * time.Hour
	DefaultRetention1d = 3 * 365 * 24 * time.Hour
)

// UsageRetentions returns the retention of each usage tier with the defaults filled in; the
// deprecated jobs.usage_retention still sets the 5-minute tier's when usage.retention_5m does not.
func (c Config) UsageRetentions() Usage {
	u := c.Usage
	if u.Retention5m == 0 {
		u.Retention5m = c.Jobs.UsageRetention
	}
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&u.Retention5m, DefaultRetention5m}, {&u.Retention1h, DefaultRetention1h}, {&u.Retention1d, DefaultRetention1d}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return u
}

// Deprecations lists the deprecated keys the configuration sets, each with what replaces it
// (logged as warnings at start-up).
func (c Config) Deprecations() []string {
	if c.Jobs.UsageRetention == 0 {
		return nil
	}
	msg := "jobs.usage_retention is deprecated: use usage.retention_5m (and usage.retention_1h, usage.retention_1d)"
	if c.Usage.Retention5m != 0 {
		msg += "; ignored, usage.retention_5m is set"
	}
	return []string{msg}
}

// Executor tunes the operation executor.
type Executor struct {
	Workers int `yaml:"workers"`
	// BackupWorkers caps the backups one replica runs at once (0: half the workers, at least
	// one, and with more than one worker at most workers-1), so a backup window leaves workers
	// for every other action (R42).
	BackupWorkers int           `yaml:"backup_workers"`
	Lease         time.Duration `yaml:"lease"`
	PollInterval  time.Duration `yaml:"poll_interval"`
	DrainTimeout  time.Duration `yaml:"drain_timeout"`
	OperationWait time.Duration `yaml:"max_wait"`
}

// validateBackupWorkers checks executor.backup_workers against executor.workers: a backup
// may take every worker only on a replica that has one.
func (e Executor) validateBackupWorkers() error {
	top := max(e.Workers-1, 1)
	if e.BackupWorkers < 0 || e.BackupWorkers > top {
		return &Error{Key: "executor.backup_workers",
			Reason: fmt.Sprintf("must be between 1 and %d (executor.workers - 1; 0 = default, half the workers)", top)}
	}
	return nil
}

// MetricsCfg protects /metrics with an optional bearer token.
type MetricsCfg struct {
	BearerToken string `yaml:"bearer_token"`
}

// Scope names.
const (
	ScopeBilling    = "billing"
	ScopeStorefront = "storefront"
	ScopeAdmin      = "admin"
)

// Error is a configuration error about one key.
type Error struct {
	Key    string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("config: %s: %s", e.Key, e.Reason) }

// Defaults returns a Config with every default filled in.
func Defaults() Config {
	return Config{
		Listen:    "127.0.0.1:8080",
		LogFormat: "json",
		LogLevel:  "info",
		Database:  Database{Driver: "sqlite", DSN: "pvebill.db"},
		Jobs:      Jobs{SwapSampling: "@every 1m", Limits: "@every 1m"},
		Executor: Executor{Workers: 4, Lease: 30 * time.Second, PollInterval: time.Second,
			DrainTimeout: 30 * time.Second, OperationWait: 60 * time.Second},
	}
}

// Load reads the YAML file at path (unknown keys are errors), applies PVEBILL_* overrides from
// env and validates the result.
func Load(path string, env []string) (Config, error) {
	cfg := Defaults()
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, &Error{Key: "--config", Reason: err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, &Error{Key: keyFromYAMLError(err), Reason: err.Error()}
	}
	if err := ApplyEnv(&cfg, env); err != nil {
		return cfg, err
	}
	if err := cfg.readSecretFiles(filepath.Dir(path)); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// readSecretFiles fills each client's secret from its secret_file (relative to dir). The error
// names the key and the file, never what the file holds.
func (c *Config) readSecretFiles(dir string) error {
	for i := range c.Clients {
		cl := &c.Clients[i]
		if cl.SecretFile == "" {
			continue
		}
		key := fmt.Sprintf("clients[%d].secret_file", i)
		if cl.Secret != "" {
			return &Error{Key: key, Reason: "set secret or secret_file, not both"}
		}
		path := cl.SecretFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return &Error{Key: key, Reason: err.Error()}
		}
		cl.Secret = strings.TrimRight(string(raw), " \t\r\n")
	}
	return nil
}

func keyFromYAMLError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "field "); i >= 0 {
		rest := msg[i+len("field "):]
		if j := strings.IndexByte(rest, ' '); j >= 0 {
			return rest[:j]
		}
		return rest
	}
	return "(file)"
}

// ApplyEnv applies PVEBILL_<PATH> overrides: the upper-cased yaml path joined with "_", list
// elements by index (PVEBILL_CLUSTERS_0_TOKEN_SECRET). Lists of strings take comma-separated values.
// An unknown PVEBILL_ variable is an error (a typo must not be ignored); PVEBILL_TEST_* is
// reserved for the test suite. An index names an element the file has or the one after the
// last: PVEBILL_CLUSTERS_2_… adds a third cluster to a file of two, and …_5_… is an error, since
// it would leave elements with nothing in them. The variables may come in any order.
func ApplyEnv(cfg *Config, env []string) error {
	var pending []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, "PVEBILL_") && !strings.HasPrefix(name, "PVEBILL_TEST_") {
			pending = append(pending, kv) // PVEBILL_TEST_* belongs to the test suite, not the configuration
		}
	}
	// A variable that adds an element after one another variable adds waits for that one:
	// each pass applies what it can, until a pass applies nothing.
	for len(pending) > 0 {
		var later []string
		var first error
		for _, kv := range pending {
			name, value, _ := strings.Cut(kv, "=")
			err := setPath(reflect.ValueOf(cfg).Elem(), strings.TrimPrefix(name, "PVEBILL_"), value)
			switch {
			case errors.Is(err, errPastEnd):
				later = append(later, kv)
				if first == nil {
					first = &Error{Key: name, Reason: err.Error()}
				}
			case err != nil:
				return &Error{Key: name, Reason: err.Error()}
			}
		}
		if len(later) == len(pending) {
			return first
		}
		pending = later
	}
	return nil
}

// errPastEnd is a list index beyond the element after the last.
var errPastEnd = errors.New("no such list element: an index names an element the file has, or the one after the last")

func setPath(v reflect.Value, path, value string) error {
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		return setStructPath(v, path, value)
	case reflect.Slice:
		return setSlicePath(v, path, value)
	}
	if path != "" {
		return fmt.Errorf("unknown configuration key")
	}
	return setScalar(v, value)
}

// setStructPath sets the field path names (its yaml name in upper case, then the rest).
func setStructPath(v reflect.Value, path, value string) error {
	t := v.Type()
	// Longest matching field name first, since names contain "_" themselves.
	best, rest := -1, ""
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if r, ok := underKey(path, strings.ToUpper(key)); ok && key != "" && (best < 0 || len(r) < len(rest)) {
			best, rest = i, r
		}
	}
	if best < 0 {
		return fmt.Errorf("unknown configuration key")
	}
	return setPath(v.Field(best), rest, value)
}

// underKey reports whether path is key or starts with key and "_", and returns what follows.
func underKey(path, key string) (string, bool) {
	if path == key {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, key+"_")
	return rest, ok
}

// setSlicePath sets a list of strings from a comma-separated value, or the element path
// indexes. The index is matched as a key is, against the elements there are and the one after
// the last, so that the overlay never makes a gap.
func setSlicePath(v reflect.Value, path, value string) error {
	if v.Type().Elem().Kind() == reflect.String && path == "" {
		parts := []string{}
		for _, p := range strings.Split(value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		v.Set(reflect.ValueOf(parts))
		return nil
	}
	for i := range v.Len() + 1 {
		rest, ok := underKey(path, fmt.Sprint(i))
		if !ok || rest == "" {
			continue
		}
		if i == v.Len() {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
		return setPath(v.Index(i), rest, value)
	}
	if first, _, _ := strings.Cut(path, "_"); strings.Trim(first, "0123456789") == "" && first != "" {
		return errPastEnd
	}
	return fmt.Errorf("a list element needs an index (…_0_…)")
}

// setScalar sets a string as it is, and any other value as the file's parser reads it: a
// boolean, a number or a duration mean the same in the environment as in the file. A value the
// parser reads as nothing (empty, "~", "null") or as more than a scalar is refused, so that a
// variable never silently leaves its key as it was.
func setScalar(v reflect.Value, value string) error {
	if v.Kind() == reflect.String {
		v.SetString(value)
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) != 1 ||
		doc.Content[0].Kind != yaml.ScalarNode || doc.Content[0].ShortTag() == "!!null" {
		return fmt.Errorf("not a %s: %q", scalarName(v.Type()), value)
	}
	if err := doc.Content[0].Decode(v.Addr().Interface()); err != nil {
		return fmt.Errorf("not a %s: %q", scalarName(v.Type()), value)
	}
	return nil
}

// scalarName names the kind of value a field holds, for an error.
func scalarName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "duration"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		return "number"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "whole number"
	}
	return t.String()
}

// Validate checks the configuration and names the first bad key.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateBasics, c.validateClients, c.validateClusters, c.validateLimits, c.validateTLS, c.validateConsole, c.validateDNS, c.validatePeering} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateBasics() error {
	if c.Listen == "" {
		return &Error{Key: "listen", Reason: "must not be empty"}
	}
	switch c.LogFormat {
	case "json", "text":
	default:
		return &Error{Key: "log_format", Reason: fmt.Sprintf("must be json or text, not %q", c.LogFormat)}
	}
	switch c.Database.Driver {
	case "mysql", "sqlite":
	default:
		return &Error{Key: "database.driver", Reason: fmt.Sprintf("must be mysql or sqlite, not %q", c.Database.Driver)}
	}
	if c.Database.DSN == "" {
		return &Error{Key: "database.dsn", Reason: "must not be empty"}
	}
	if len(c.Database.Failover) > 0 && c.Database.Driver != "mysql" {
		return &Error{Key: "database.failover", Reason: "needs driver mysql"}
	}
	return nil
}

// MinClientSecret is the shortest client secret accepted: 32 characters.
const MinClientSecret = 32

// placeholder marks the secrets of example configs; a secret that contains it is refused.
const placeholder = "CHANGE-ME"

// isPlaceholder reports whether a secret is an example config's placeholder.
func isPlaceholder(secret string) bool {
	return strings.Contains(strings.ToUpper(secret), placeholder)
}

// IDPattern is the shape of an id a client sends or is known by: a service id, a request id, and
// a client id. A client id is written into the guest's ownership stamp "pvebill-service:
// CLIENT/ID" (R46), into metric labels, log lines and backup notes, so it takes the service id's
// characters alone: no "/" (the stamp's separator), no whitespace or control characters, at
// most 64 (the width of every client_id column).
var IDPattern = validation.IDPattern

// validateClients checks the API clients: ids of IDPattern's shape and unique, secrets that are not placeholders and at
// least MinClientSecret long, known scopes, callbacks.
func (c *Config) validateClients() error {
	seen := map[string]bool{}
	for i, cl := range c.Clients {
		key := fmt.Sprintf("clients[%d]", i)
		if cl.ID == "" {
			return &Error{Key: key + ".id", Reason: "must not be empty"}
		}
		if !IDPattern.MatchString(cl.ID) {
			return &Error{Key: key + ".id", Reason: fmt.Sprintf("%q is not a client id: 1 to 64 of A-Z a-z 0-9 . _ : -", cl.ID)}
		}
		if seen[cl.ID] {
			return &Error{Key: key + ".id", Reason: "duplicate client id"}
		}
		seen[cl.ID] = true
		if isPlaceholder(cl.Secret) {
			return &Error{Key: key + ".secret", Reason: "is a placeholder (contains CHANGE-ME): set a long random secret"}
		}
		if len(cl.Secret) < MinClientSecret {
			return &Error{Key: key + ".secret", Reason: fmt.Sprintf("must be at least %d characters", MinClientSecret)}
		}
		if len(cl.Scopes) == 0 {
			return &Error{Key: key + ".scopes", Reason: "must name at least one scope"}
		}
		for _, s := range cl.Scopes {
			switch s {
			case ScopeBilling, ScopeStorefront, ScopeAdmin:
			default:
				return &Error{Key: key + ".scopes", Reason: fmt.Sprintf("unknown scope %q (billing, storefront, admin)", s)}
			}
		}
		if err := validateCallback(key, cl); err != nil {
			return err
		}
	}
	return nil
}

// validateClusters checks the Proxmox clusters: unique names, an http(s) URL, an API token
// whose secret is not a placeholder.
func (c *Config) validateClusters() error {
	names := map[string]bool{}
	for i, cl := range c.Clusters {
		key := fmt.Sprintf("clusters[%d]", i)
		if cl.Name == "" {
			return &Error{Key: key + ".name", Reason: "must not be empty"}
		}
		if names[cl.Name] {
			return &Error{Key: key + ".name", Reason: "duplicate cluster name"}
		}
		names[cl.Name] = true
		if cl.Agent != nil {
			if err := validateAgentCluster(key, cl); err != nil {
				return err
			}
			continue
		}
		if !strings.HasPrefix(cl.URL, "https://") && !strings.HasPrefix(cl.URL, "http://") {
			return &Error{Key: key + ".url", Reason: "must be an http(s) URL"}
		}
		if cl.TokenID == "" || !strings.Contains(cl.TokenID, "!") {
			return &Error{Key: key + ".token_id", Reason: "must look like user@realm!tokenid"}
		}
		if cl.TokenSecret == "" {
			return &Error{Key: key + ".token_secret", Reason: "must not be empty"}
		}
		if isPlaceholder(cl.TokenSecret) {
			return &Error{Key: key + ".token_secret", Reason: "is a placeholder (contains CHANGE-ME): set the API token's secret"}
		}
		if err := validateConsoleUser(key, cl); err != nil {
			return err
		}
		if o := cl.Overcommit(); !(o >= 1.0) || math.IsInf(o, 0) {
			return &Error{Key: key + ".memory_overcommit", Reason: "must be a number of at least 1.0"}
		}
	}
	return nil
}

// validateAgentCluster checks a cluster reached through an agent (R57): a valid public key, and
// none of the keys the agent holds instead (each is refused by name).
func validateAgentCluster(key string, cl Cluster) error {
	if _, err := agent.ParsePublicKey(cl.Agent.PublicKey); err != nil {
		return &Error{Key: key + ".agent.public_key", Reason: err.Error()}
	}
	beside := []struct {
		name string
		set  bool
	}{{"url", cl.URL != ""}, {"token_id", cl.TokenID != ""}, {"token_secret", cl.TokenSecret != ""},
		{"fingerprint", cl.Fingerprint != ""}, {"insecure_skip_verify", cl.InsecureSkipVerify},
		{"console_user", cl.ConsoleUser != ""}, {"console_password", cl.ConsolePassword != ""}}
	for _, b := range beside {
		if b.set {
			return &Error{Key: key + "." + b.name, Reason: "must not be set beside agent: the agent holds the Proxmox endpoint and credentials"}
		}
	}
	if o := cl.Overcommit(); !(o >= 1.0) || math.IsInf(o, 0) {
		return &Error{Key: key + ".memory_overcommit", Reason: "must be a number of at least 1.0"}
	}
	return nil
}

// validateConsoleUser checks a cluster's console user: a real user@realm (an API token cannot
// open a console, docs/proxmox.md §14) with a password that is not a placeholder, or neither.
func validateConsoleUser(key string, cl Cluster) error {
	if cl.ConsoleUser == "" {
		if cl.ConsolePassword != "" {
			return &Error{Key: key + ".console_user", Reason: "must be set with console_password"}
		}
		return nil
	}
	user, realm, ok := strings.Cut(cl.ConsoleUser, "@")
	if !ok || user == "" || realm == "" || strings.ContainsAny(cl.ConsoleUser, "!: \t\r\n") {
		return &Error{Key: key + ".console_user", Reason: "must look like user@realm (a user, not an API token)"}
	}
	if cl.ConsolePassword == "" {
		return &Error{Key: key + ".console_password", Reason: "must not be empty with console_user"}
	}
	if isPlaceholder(cl.ConsolePassword) {
		return &Error{Key: key + ".console_password", Reason: "is a placeholder (contains CHANGE-ME): set the console user's password"}
	}
	return nil
}

func (c *Config) validateLimits() error {
	if c.Jobs.SwapSamplingConcurrency < 0 || c.Jobs.SwapSamplingConcurrency > 16 {
		return &Error{Key: "jobs.swap_sampling_concurrency", Reason: "must be between 1 and 16 (0 = default 2)"}
	}
	if c.Jobs.UsageRetention != 0 && c.Jobs.UsageRetention < 24*time.Hour {
		return &Error{Key: "jobs.usage_retention", Reason: "must be at least 24h"}
	}
	if c.Jobs.ReadinessInterval != 0 && c.Jobs.ReadinessInterval < time.Second {
		return &Error{Key: "jobs.readiness_interval", Reason: "must be at least 1s (0 = default 15s)"}
	}
	if err := c.Usage.validate(); err != nil {
		return err
	}
	if c.Executor.Workers < 1 || c.Executor.Workers > 256 {
		return &Error{Key: "executor.workers", Reason: "must be between 1 and 256"}
	}
	if err := c.Executor.validateBackupWorkers(); err != nil {
		return err
	}
	if c.Executor.Lease < time.Second {
		return &Error{Key: "executor.lease", Reason: "must be at least 1s"}
	}
	return nil
}

// validateTLS checks that tls.cert_file and tls.key_file are set together.
func (c *Config) validateTLS() error {
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return &Error{Key: "tls", Reason: "cert_file and key_file are set together or not at all"}
	}
	return nil
}

// validateConsole checks the console settings: a secret that is no placeholder and long
// enough, and a public URL that is absolute http(s) when set.
func (c *Config) validateConsole() error {
	cc := c.Console
	if cc.MaxSession < 0 || (cc.MaxSession > 0 && cc.MaxSession < time.Minute) {
		return &Error{Key: "console.max_session", Reason: "must be at least 1m (0 = default 2h)"}
	}
	if cc.MaxSessionsPerService < 0 || cc.MaxSessionsPerService > 1000 {
		return &Error{Key: "console.max_sessions_per_service", Reason: "must be 1 to 1000 (0 = default 2)"}
	}
	if cc.MaxSessionsPerClient < 0 || cc.MaxSessionsPerClient > 100000 {
		return &Error{Key: "console.max_sessions_per_client", Reason: "must be 1 to 100000 (0 = default 20)"}
	}
	if cc.Secret == "" {
		return nil
	}
	if isPlaceholder(cc.Secret) {
		return &Error{Key: "console.secret", Reason: "is a placeholder (contains CHANGE-ME): set a long random secret"}
	}
	if len(cc.Secret) < MinConsoleSecret {
		return &Error{Key: "console.secret", Reason: fmt.Sprintf("must be at least %d characters", MinConsoleSecret)}
	}
	if cc.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(cc.PublicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.HasSuffix(cc.PublicURL, "/") ||
		u.RawQuery != "" || u.Fragment != "" {
		return &Error{Key: "console.public_url", Reason: "must be an absolute http(s) URL without a trailing slash, query or fragment"}
	}
	return nil
}

// validatePeering checks peering: an absolute http(s) URL without path, query or fragment, and
// a secret long enough and no placeholder; or nothing at all.
func (c *Config) validatePeering() error {
	p := c.Peering
	if p.URL == "" {
		if p.Secret != "" {
			return &Error{Key: "peering.url", Reason: "is required beside peering.secret"}
		}
		return nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" {
		return &Error{Key: "peering.url", Reason: "must be an absolute http(s) URL without a path, query or fragment"}
	}
	if isPlaceholder(p.Secret) {
		return &Error{Key: "peering.secret", Reason: "is a placeholder (contains CHANGE-ME): set a long random secret"}
	}
	if len(p.Secret) < MinPeeringSecret {
		return &Error{Key: "peering.secret", Reason: fmt.Sprintf("must be at least %d characters", MinPeeringSecret)}
	}
	return nil
}

// validateDNS checks dns.powerdns: an absolute http(s) URL without query or fragment, and an
// API key that is set and no placeholder; or nothing at all (reverse DNS off).
func (c *Config) validateDNS() error {
	p := c.DNS.PowerDNS
	if p.URL == "" {
		if p.APIKey != "" || p.ServerID != "" {
			return &Error{Key: "dns.powerdns.url", Reason: "must be set when api_key or server_id is"}
		}
		return nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return &Error{Key: "dns.powerdns.url", Reason: "must be an absolute http(s) URL without credentials, query or fragment"}
	}
	switch {
	case p.APIKey == "":
		return &Error{Key: "dns.powerdns.api_key", Reason: "must be set with dns.powerdns.url"}
	case isPlaceholder(p.APIKey):
		return &Error{Key: "dns.powerdns.api_key", Reason: "is a placeholder (contains CHANGE-ME): set PowerDNS's api-key"}
	}
	if p.ServerID != "" && strings.ContainsAny(p.ServerID, "/?#% ") {
		return &Error{Key: "dns.powerdns.server_id", Reason: "must be a plain server id such as localhost"}
	}
	return nil
}

// validate refuses a tier retention under a day (each tier's buckets are rolled up from the one
// below, and the daily tier needs whole days).
func (u Usage) validate() error {
	for _, f := range []struct {
		key string
		v   time.Duration
	}{{"usage.retention_5m", u.Retention5m}, {"usage.retention_1h", u.Retention1h}, {"usage.retention_1d", u.Retention1d}} {
		if f.v != 0 && f.v < 24*time.Hour {
			return &Error{Key: f.key, Reason: "must be at least 24h"}
		}
	}
	return nil
}

// Warning is a setting that works but weakens transport security.
type Warning struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// TransportWarnings lists the clusters reached without TLS (on another machine), or without
// verifying their certificate: the API token and every root password cross the network
// readable or to an impostor. pvebill starts with them, logs each at WARN and reports them in
// readiness.
func (c *Config) TransportWarnings() []Warning {
	var out []Warning
	for i, cl := range c.Clusters {
		key := fmt.Sprintf("clusters[%d]", i)
		if strings.HasPrefix(cl.URL, "http://") && !loopback(cl.URL) {
			out = append(out, Warning{Key: key + ".url", Reason: "plain http: the API token and root passwords cross the network unencrypted"})
		}
		if cl.InsecureSkipVerify {
			out = append(out, Warning{Key: key + ".insecure_skip_verify", Reason: "the cluster's TLS certificate is not verified: anyone on the path can impersonate it"})
		}
	}
	return out
}

// loopback reports whether a URL's host is this machine (localhost or a loopback address):
// plain http there crosses no network (the embedded demo's simulator).
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// validateCallback checks a client's optional callback_url and callback_secret: both or neither,
// an absolute http(s) URL, a secret of at least 16 characters.
func validateCallback(key string, cl Client) error {
	if cl.CallbackURL == "" {
		if cl.CallbackSecret != "" {
			return &Error{Key: key + ".callback_url", Reason: "must be set when callback_secret is"}
		}
		return nil
	}
	u, err := url.Parse(cl.CallbackURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Error{Key: key + ".callback_url", Reason: "must be an absolute http(s) URL"}
	}
	if isPlaceholder(cl.CallbackSecret) {
		return &Error{Key: key + ".callback_secret", Reason: "is a placeholder (contains CHANGE-ME): set a long random secret"}
	}
	if len(cl.CallbackSecret) < 16 {
		return &Error{Key: key + ".callback_secret", Reason: "must be at least 16 characters when callback_url is set"}
	}
	return nil
}

// String renders the config for logs with every secret redacted.
func (c Config) String() string {
	cp := c
	cp.Clients = append([]Client(nil), c.Clients...)
	for i := range cp.Clients {
		cp.Clients[i].Secret = "[redacted]"
		if cp.Clients[i].CallbackSecret != "" {
			cp.Clients[i].CallbackSecret = "[redacted]"
		}
	}
	cp.Clusters = append([]Cluster(nil), c.Clusters...)
	for i := range cp.Clusters {
		cp.Clusters[i].TokenSecret = "[redacted]"
		if cp.Clusters[i].ConsolePassword != "" {
			cp.Clusters[i].ConsolePassword = "[redacted]"
		}
	}
	cp.Database.DSN = RedactDSN(c.Database.DSN)
	if len(c.Database.Failover) > 0 {
		cp.Database.Failover = make([]string, len(c.Database.Failover))
		for i, d := range c.Database.Failover {
			cp.Database.Failover[i] = RedactDSN(d)
		}
	}
	if cp.Metrics.BearerToken != "" {
		cp.Metrics.BearerToken = "[redacted]"
	}
	out, _ := yaml.Marshal(cp)
	return string(out)
}

// RedactDSN hides the password in a MySQL DSN (user:password@tcp(...)).
func RedactDSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	cred := dsn[:at]
	if colon := strings.IndexByte(cred, ':'); colon >= 0 {
		return cred[:colon] + ":[redacted]" + dsn[at:]
	}
	return dsn
}
