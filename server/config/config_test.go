package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pvebill.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = `
listen: "127.0.0.1:9090"
log_format: text
database:
  driver: mysql
  dsn: "pvebill:file-secret@tcp(127.0.0.1:3306)/pvebill"
clients:
  - id: whmcs
    secret: "test-client-secret-0123456789abcdef"
    scopes: [billing, admin]
clusters:
  - name: default
    url: "https://pve1.example.com:8006"
    token_id: "pvebill@pve!provision"
    token_secret: "00000000-0000-0000-0000-000000000000"
    nodes: [pve1, pve2]
jobs:
  swap_sampling: "@every 30s"
`

func TestLoadAndEnvOverrides(t *testing.T) {
	p := write(t, good)
	cfg, err := Load(p, []string{
		"PVEBILL_DATABASE_DSN=pvebill:env-secret@tcp(db:3306)/pvebill",
		"PVEBILL_CLUSTERS_0_TOKEN_SECRET=from-env",
		"PVEBILL_CLUSTERS_0_NODES=pve3, pve4",
		"PVEBILL_CLIENTS_1_ID=shop",
		"PVEBILL_CLIENTS_1_SECRET=shop-secret-0123456789abcdef0123456",
		"PVEBILL_CLIENTS_1_SCOPES=storefront",
		"PVEBILL_EXECUTOR_LEASE=45s",
		"PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY=true",
		"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve",
		"PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=console-pass-from-env",
		"OTHER=ignored",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9090" || cfg.LogFormat != "text" || cfg.Jobs.SwapSampling != "@every 30s" || cfg.Jobs.Limits != "@every 1m" {
		t.Fatalf("%+v", cfg)
	}
	if cfg.Database.DSN != "pvebill:env-secret@tcp(db:3306)/pvebill" || cfg.Clusters[0].TokenSecret != "from-env" ||
		strings.Join(cfg.Clusters[0].Nodes, ",") != "pve3,pve4" || !cfg.Clusters[0].InsecureSkipVerify ||
		cfg.Clusters[0].ConsoleUser != "console@pve" || cfg.Clusters[0].ConsolePassword != "console-pass-from-env" {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if len(cfg.Clients) != 2 || cfg.Clients[1].ID != "shop" || cfg.Executor.Lease != 45*time.Second {
		t.Fatalf("clients %+v lease %v", cfg.Clients, cfg.Executor.Lease)
	}
	s := cfg.String()
	for _, secret := range []string{"env-secret", "from-env", "console-pass-from-env", "test-client-secret-0123456789abcdef", "shop-secret-0123456789abcdef0123456"} {
		if strings.Contains(s, secret) {
			t.Errorf("String() shows %q", secret)
		}
	}
}

// A config error names the key it is about.
func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, body string
		env        []string
		key        string
	}{
		{"log format", strings.Replace(good, "log_format: text", "log_format: xml", 1), nil, "log_format"},
		{"driver", strings.Replace(good, "driver: mysql", "driver: oracle", 1), nil, "database.driver"},
		{"scope", strings.Replace(good, "[billing, admin]", "[billing, root]", 1), nil, "clients[0].scopes"},
		{"short secret", strings.Replace(good, `"test-client-secret-0123456789abcdef"`, `"x"`, 1), nil, "clients[0].secret"},
		{"secret of 31 characters", strings.Replace(good, `"test-client-secret-0123456789abcdef"`, `"`+strings.Repeat("s", 31)+`"`, 1), nil, "clients[0].secret"},
		{"placeholder secret", strings.Replace(good, `"test-client-secret-0123456789abcdef"`, `"CHANGE-ME-a-long-random-secret-of-40-chars"`, 1), nil, "clients[0].secret"},
		{"placeholder secret from env", good, []string{"PVEBILL_CLIENTS_0_SECRET=xxxxxxxxxxxxxxxxxxxxCHANGE-MExxxxxxxxxxxxxxxx"}, "clients[0].secret"},
		{"placeholder token secret", good, []string{"PVEBILL_CLUSTERS_0_TOKEN_SECRET=CHANGE-ME"}, "clusters[0].token_secret"},
		{"placeholder console password", good, []string{"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve", "PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=CHANGE-ME"}, "clusters[0].console_password"},
		{"console user without password", good, []string{"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve"}, "clusters[0].console_password"},
		{"console password without user", good, []string{"PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=s3cret-console"}, "clusters[0].console_user"},
		{"console user is a token", good, []string{"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve!tok", "PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=s3cret-console"}, "clusters[0].console_user"},
		{"tls cert without key", good + "\ntls:\n  cert_file: /etc/pvebill/cert.pem\n", nil, "tls"},
		{"url", strings.Replace(good, "https://pve1", "ftp://pve1", 1), nil, "clusters[0].url"},
		// R52: memory_overcommit is a number of at least 1.0.
		{"memory overcommit below one", good, []string{"PVEBILL_CLUSTERS_0_MEMORY_OVERCOMMIT=0.9"}, "clusters[0].memory_overcommit"},
		{"memory overcommit zero", strings.Replace(good, `token_id: "pvebill@pve!provision"`, "memory_overcommit: 0\n    token_id: \"pvebill@pve!provision\"", 1), nil, "clusters[0].memory_overcommit"},
		{"memory overcommit not a number", good, []string{"PVEBILL_CLUSTERS_0_MEMORY_OVERCOMMIT=lots"}, "PVEBILL_CLUSTERS_0_MEMORY_OVERCOMMIT"},
		{"token id", strings.Replace(good, "pvebill@pve!provision", "pvebill@pve", 1), nil, "clusters[0].token_id"},
		{"unknown key", good + "\nswap_mb: 1\n", nil, "swap_mb"},
		{"env unknown", good, []string{"PVEBILL_NOPE=1"}, "PVEBILL_NOPE"},
		{"env bad bool", good, []string{"PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY=maybe"}, "PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY"},
		{"env bad duration", good, []string{"PVEBILL_EXECUTOR_LEASE=soon"}, "PVEBILL_EXECUTOR_LEASE"},
		// An index names an element the file has or the next one: a gap is refused, not filled
		// with empty elements.
		{"env list gap", good, []string{"PVEBILL_CLUSTERS_2_URL=https://pve9.example.com:8006"}, "PVEBILL_CLUSTERS_2_URL"},
		{"env list index missing", good, []string{"PVEBILL_CLUSTERS_URL=https://pve9.example.com:8006"}, "PVEBILL_CLUSTERS_URL"},
		// A value the parser reads as nothing never leaves the key silently as it was.
		{"env empty number", good, []string{"PVEBILL_EXECUTOR_WORKERS="}, "PVEBILL_EXECUTOR_WORKERS"},
		{"env null number", good, []string{"PVEBILL_EXECUTOR_WORKERS=~"}, "PVEBILL_EXECUTOR_WORKERS"},
		{"env null boolean", good, []string{"PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY=null"}, "PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY"},
		{"env mapping for a number", good, []string{"PVEBILL_EXECUTOR_WORKERS={a: 1}"}, "PVEBILL_EXECUTOR_WORKERS"},
		{"env workers", good, []string{"PVEBILL_EXECUTOR_WORKERS=0"}, "executor.workers"},
		{"backup workers as many as workers", good, []string{"PVEBILL_EXECUTOR_BACKUP_WORKERS=4"}, "executor.backup_workers"},
		{"backup workers negative", good, []string{"PVEBILL_EXECUTOR_BACKUP_WORKERS=-1"}, "executor.backup_workers"},
		{"backup workers above one worker", good, []string{"PVEBILL_EXECUTOR_WORKERS=1", "PVEBILL_EXECUTOR_BACKUP_WORKERS=2"}, "executor.backup_workers"},
		{"sampler concurrency", good, []string{"PVEBILL_JOBS_SWAP_SAMPLING_CONCURRENCY=99"}, "jobs.swap_sampling_concurrency"},
		{"retention", good, []string{"PVEBILL_JOBS_USAGE_RETENTION=1h"}, "jobs.usage_retention"},
		{"readiness interval", good, []string{"PVEBILL_JOBS_READINESS_INTERVAL=500ms"}, "jobs.readiness_interval"},
		{"retention 5m", good, []string{"PVEBILL_USAGE_RETENTION_5M=1h"}, "usage.retention_5m"},
		{"retention 1d", good + "\nusage:\n  retention_1d: 23h\n", nil, "usage.retention_1d"},
		{"console secret placeholder", good, []string{"PVEBILL_CONSOLE_SECRET=CHANGE-ME-console-secret-of-forty-characters",
			"PVEBILL_CONSOLE_PUBLIC_URL=https://panel.example.com"}, "console.secret"},
		{"console secret short", good, []string{"PVEBILL_CONSOLE_SECRET=" + strings.Repeat("c", 31),
			"PVEBILL_CONSOLE_PUBLIC_URL=https://panel.example.com"}, "console.secret"},
		{"console public url relative", good, []string{"PVEBILL_CONSOLE_SECRET=" + strings.Repeat("c", 32),
			"PVEBILL_CONSOLE_PUBLIC_URL=/console"}, "console.public_url"},
		{"console public url slash", good, []string{"PVEBILL_CONSOLE_SECRET=" + strings.Repeat("c", 32),
			"PVEBILL_CONSOLE_PUBLIC_URL=https://panel.example.com/"}, "console.public_url"},
		{"console max session", good, []string{"PVEBILL_CONSOLE_MAX_SESSION=30s"}, "console.max_session"},
		{"console sessions per service", good, []string{"PVEBILL_CONSOLE_MAX_SESSIONS_PER_SERVICE=-1"}, "console.max_sessions_per_service"},
		{"console sessions per client", good + "\nconsole:\n  max_sessions_per_client: -3\n", nil, "console.max_sessions_per_client"},
		// R57: peering needs the replica's own URL and a long shared secret.
		{"peering secret without url", good, []string{"PVEBILL_PEERING_SECRET=" + strings.Repeat("p", 32)}, "peering.url"},
		{"peering url with a path", good, []string{"PVEBILL_PEERING_URL=http://10.0.0.5:8080/pvebill",
			"PVEBILL_PEERING_SECRET=" + strings.Repeat("p", 32)}, "peering.url"},
		{"peering secret short", good, []string{"PVEBILL_PEERING_URL=http://10.0.0.5:8080", "PVEBILL_PEERING_SECRET=short"}, "peering.secret"},
		{"peering secret placeholder", good, []string{"PVEBILL_PEERING_URL=http://10.0.0.5:8080",
			"PVEBILL_PEERING_SECRET=CHANGE-ME-peering-secret-of-forty-characters"}, "peering.secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, c.body), c.env)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("err = %v, want key %s", err, c.key)
			}
			if !strings.Contains(err.Error(), c.key) {
				t.Fatalf("message %q does not name %s", err, c.key)
			}
		})
	}
}

// R46: a client id is written into the guest's stamp "pvebill-service: CLIENT/ID", metric
// labels, log lines and backup notes, so the config refuses one that is not 1 to 64 of the
// service id's characters (no "/", no whitespace or control characters), naming the key; every
// character the pattern allows, at the longest, loads.
// executor.backup_workers may be left out (0: the executor's default), or be 1 to workers-1;
// a replica with one worker may give it to backups.
// The overlay may add list elements in any order, each after the last; a string is taken as it
// is, never read as YAML (a secret may look like a comment, an alias or null).
func TestEnvAddsElementsInAnyOrder(t *testing.T) {
	secret := func(c string) string { return strings.Repeat(c, 40) }
	cfg, err := Load(write(t, good), []string{
		"PVEBILL_CLIENTS_2_ID=third", "PVEBILL_CLIENTS_2_SECRET=" + secret("c"), "PVEBILL_CLIENTS_2_SCOPES=billing",
		"PVEBILL_CLIENTS_1_ID=second", "PVEBILL_CLIENTS_1_SECRET=" + secret("b"), "PVEBILL_CLIENTS_1_SCOPES=billing",
		"PVEBILL_CLUSTERS_0_TOKEN_SECRET=#not-a-comment",
		"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve", "PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=null",
		"PVEBILL_EXECUTOR_LEASE=1m30s",
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cfg.Clients {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != cfg.Clients[0].ID+",second,third" || cfg.Clients[2].Secret != secret("c") {
		t.Fatalf("clients %v", ids)
	}
	if cfg.Clusters[0].TokenSecret != "#not-a-comment" || cfg.Clusters[0].ConsolePassword != "null" {
		t.Fatalf("strings read as YAML: %q %q", cfg.Clusters[0].TokenSecret, cfg.Clusters[0].ConsolePassword)
	}
	if cfg.Executor.Lease != 90*time.Second {
		t.Fatalf("lease %v", cfg.Executor.Lease)
	}
}

func TestBackupWorkers(t *testing.T) {
	for _, env := range [][]string{nil, {"PVEBILL_EXECUTOR_BACKUP_WORKERS=3"},
		{"PVEBILL_EXECUTOR_WORKERS=1", "PVEBILL_EXECUTOR_BACKUP_WORKERS=1"}} {
		cfg, err := Load(write(t, good), env)
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		if env == nil && cfg.Executor.BackupWorkers != 0 {
			t.Fatalf("default backup_workers %d, want 0", cfg.Executor.BackupWorkers)
		}
	}
}

// R46: a client id is 1 to 64 of the service id's characters; the config names the key.
func TestClientIDShape(t *testing.T) {
	for name, id := range map[string]string{
		"slash": "whmcs/eu", "space": "whm cs", "tab": "whmcs\t", "newline": "whmcs\nx",
		"too long": strings.Repeat("c", 65), "non-ascii": "whmcs\u00e9", "equals": "a=b", "quote": "a'b",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(write(t, strings.Replace(good, "id: whmcs", `id: "`+id+`"`, 1)), nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "clients[0].id" || !strings.Contains(err.Error(), "client id") {
				t.Fatalf("id %q: err = %v, want a clients[0].id error", id, err)
			}
		})
	}
	for _, id := range []string{"bad/id", "whmcs\a", "whmcs\x00", "whmcs\r"} {
		if _, err := Load(write(t, good), []string{"PVEBILL_CLIENTS_0_ID=" + id}); err == nil || !strings.Contains(err.Error(), "clients[0].id") {
			t.Fatalf("id %q from the environment: err = %v", id, err)
		}
	}
	for _, id := range []string{"Az09._:-", strings.Repeat("c", 64), "1"} {
		if _, err := Load(write(t, strings.Replace(good, "id: whmcs", `id: "`+id+`"`, 1)), nil); err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
	}
}

// The console (R41) is off without a secret, and on with a long secret and a public URL (a
// path prefix allowed), with its cluster's console user.
func TestConsoleConfig(t *testing.T) {
	cfg, err := Load(write(t, good), nil)
	if err != nil || cfg.Console.Enabled() {
		t.Fatalf("default: %v, enabled %v", err, cfg.Console.Enabled())
	}
	cfg, err = Load(write(t, good), []string{"PVEBILL_CONSOLE_SECRET=" + strings.Repeat("c", 32),
		"PVEBILL_CONSOLE_PUBLIC_URL=https://panel.example.com/pvebill", "PVEBILL_CONSOLE_MAX_SESSION=30m",
		"PVEBILL_CLUSTERS_0_CONSOLE_USER=console@pve", "PVEBILL_CLUSTERS_0_CONSOLE_PASSWORD=a-password"})
	if err != nil || !cfg.Console.Enabled() || cfg.Console.MaxSession != 30*time.Minute || cfg.Clusters[0].ConsoleUser != "console@pve" {
		t.Fatalf("%v %+v", err, cfg.Console)
	}
	// R41: the session limits, from the file or the environment (0: the console's defaults).
	cfg, err = Load(write(t, good+"\nconsole:\n  max_sessions_per_service: 3\n"), []string{"PVEBILL_CONSOLE_MAX_SESSIONS_PER_CLIENT=7"})
	if err != nil || cfg.Console.MaxSessionsPerService != 3 || cfg.Console.MaxSessionsPerClient != 7 || cfg.Console.MaxSession != 0 {
		t.Fatalf("%v %+v", err, cfg.Console)
	}
}

func TestRedactDSN(t *testing.T) {
	if got := RedactDSN("user:pw@tcp(h:1)/db"); got != "user:[redacted]@tcp(h:1)/db" {
		t.Fatal(got)
	}
	if got := RedactDSN("data/pvebill.db"); got != "data/pvebill.db" {
		t.Fatal(got)
	}
}

// Plain http and unverified TLS towards a cluster are accepted, and each is reported.
func TestTransportWarnings(t *testing.T) {
	cfg, err := Load(write(t, good), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.TransportWarnings(); len(w) != 0 {
		t.Fatalf("https, verified: %v", w)
	}
	cfg, err = Load(write(t, strings.Replace(good, "https://pve1", "http://pve1", 1)),
		[]string{"PVEBILL_CLUSTERS_0_INSECURE_SKIP_VERIFY=true"})
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.TransportWarnings()
	if len(w) != 2 || w[0].Key != "clusters[0].url" || w[1].Key != "clusters[0].insecure_skip_verify" {
		t.Fatalf("warnings %v", w)
	}
	// Plain http to this machine crosses no network (the embedded demo's simulator).
	for _, u := range []string{"http://127.0.0.1:8006", "http://localhost:8006", "http://[::1]:8006"} {
		cfg.Clusters[0].URL, cfg.Clusters[0].InsecureSkipVerify = u, false
		if w := cfg.TransportWarnings(); len(w) != 0 {
			t.Fatalf("%s: %v", u, w)
		}
	}
}

// The usage tiers' retentions default to 35 days, 400 days and 3 years; the deprecated
// jobs.usage_retention still sets the 5-minute tier's, with a warning, unless the new key is set.
// R45: retention per tier from config, the old key kept working.
func TestUsageRetentions(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		name      string
		cfg       Config
		want      Usage
		deprecate int
	}{
		{"defaults", Config{}, Usage{35 * day, 400 * day, 3 * 365 * day}, 0},
		{"old key", Config{Jobs: Jobs{UsageRetention: 60 * day}}, Usage{60 * day, 400 * day, 3 * 365 * day}, 1},
		{"new keys win", Config{Jobs: Jobs{UsageRetention: 60 * day}, Usage: Usage{Retention5m: 10 * day, Retention1h: 90 * day}},
			Usage{10 * day, 90 * day, 3 * 365 * day}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cfg.UsageRetentions(); got != c.want {
				t.Fatalf("retentions = %+v, want %+v", got, c.want)
			}
			if got := c.cfg.Deprecations(); len(got) != c.deprecate {
				t.Fatalf("deprecations = %q, want %d", got, c.deprecate)
			}
		})
	}
}

// A client's secret may come from a file (relative to the config file, trailing white space
// dropped); secret and secret_file together, or a file that cannot be read, are refused naming
// the key and never what a file holds.
func TestClientSecretFile(t *testing.T) {
	body := strings.Replace(good, `    secret: "test-client-secret-0123456789abcdef"`, `    secret_file: "secrets/whmcs"`, 1)
	p := write(t, body)
	if err := os.MkdirAll(filepath.Join(filepath.Dir(p), "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	secret := "file-client-secret-0123456789abcdef"
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "secrets", "whmcs"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, nil)
	if err != nil || cfg.Clients[0].Secret != secret {
		t.Fatalf("secret from the file: %q, %v", cfg.Clients[0].Secret, err)
	}
	if strings.Contains(cfg.String(), secret) {
		t.Error("String() shows the secret read from the file")
	}
	var ce *Error
	_, err = Load(p, []string{"PVEBILL_CLIENTS_0_SECRET=" + secret})
	if !errors.As(err, &ce) || ce.Key != "clients[0].secret_file" || !strings.Contains(ce.Reason, "not both") {
		t.Fatalf("secret beside secret_file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "secrets", "whmcs"), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err = Load(p, nil); !errors.As(err, &ce) || ce.Key != "clients[0].secret" || strings.Contains(err.Error(), "short") {
		t.Fatalf("a short secret from the file: %v", err)
	}
	_, err = Load(write(t, body), nil)
	if !errors.As(err, &ce) || ce.Key != "clients[0].secret_file" {
		t.Fatalf("a missing secret file: %v", err)
	}
}

// R52: memory_overcommit defaults to 1.0 and takes a number from the file or the environment.
func TestMemoryOvercommit(t *testing.T) {
	for _, c := range []struct {
		body string
		env  []string
		want float64
	}{
		{good, nil, 1.0},
		{strings.Replace(good, `token_id: "pvebill@pve!provision"`, "memory_overcommit: 1.25\n    token_id: \"pvebill@pve!provision\"", 1), nil, 1.25},
		{good, []string{"PVEBILL_CLUSTERS_0_MEMORY_OVERCOMMIT=2"}, 2.0},
	} {
		cfg, err := Load(write(t, c.body), c.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Clusters[0].Overcommit(); got != c.want {
			t.Errorf("memory_overcommit %v, want %v (env %v)", got, c.want, c.env)
		}
	}
}

// R55: dns.powerdns is off by default; url and api_key go together; a placeholder key, a URL
// with credentials or a query, and a key without a URL are refused naming the key. The key is in
// no error.
func TestPowerDNSConfig(t *testing.T) {
	cfg, err := Load(write(t, good), nil)
	if err != nil || cfg.DNS.PowerDNS.Enabled() {
		t.Fatalf("default: %v %+v", err, cfg.DNS)
	}
	cfg, err = Load(write(t, good+"\ndns:\n  powerdns:\n    url: http://127.0.0.1:8081\n"),
		[]string{"PVEBILL_DNS_POWERDNS_API_KEY=a-real-key-0123"})
	if err != nil || !cfg.DNS.PowerDNS.Enabled() || cfg.DNS.PowerDNS.APIKey != "a-real-key-0123" {
		t.Fatalf("%v %+v", err, cfg.DNS)
	}
	for env, key := range map[string]string{
		"PVEBILL_DNS_POWERDNS_API_KEY=CHANGE-ME":                              "dns.powerdns.api_key",
		"PVEBILL_DNS_POWERDNS_URL=":                                           "dns.powerdns.url",
		"PVEBILL_DNS_POWERDNS_URL=http://user:secret-key-0123@127.0.0.1:8081": "dns.powerdns.url",
		"PVEBILL_DNS_POWERDNS_URL=ftp://127.0.0.1:8081":                       "dns.powerdns.url",
		"PVEBILL_DNS_POWERDNS_SERVER_ID=local/host":                           "dns.powerdns.server_id",
	} {
		_, err := Load(write(t, good+"\ndns:\n  powerdns:\n    url: http://127.0.0.1:8081\n    api_key: secret-key-0123\n"), []string{env})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != key || strings.Contains(err.Error(), "secret-key-0123") {
			t.Errorf("%s: %v, want %s", env, err, key)
		}
	}
}

// R57: peering set from the environment loads as given.
func TestPeeringLoads(t *testing.T) {
	secret := strings.Repeat("p", 32)
	cfg, err := Load(write(t, good), []string{"PVEBILL_PEERING_URL=http://10.0.0.5:8080", "PVEBILL_PEERING_SECRET=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Peering.Enabled() || cfg.Peering.URL != "http://10.0.0.5:8080" || cfg.Peering.Secret != secret {
		t.Fatalf("peering %+v", cfg.Peering.URL)
	}
}
