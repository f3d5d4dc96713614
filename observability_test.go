package main

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"pvebill/modules/stack"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/server/config"
)

// scrapeApp builds the whole app against the simulator, gives every kind of series a reason to
// exist (a sampling round over managed containers, a finished operation, an HTTP request) and
// returns one real scrape of /metrics.
func scrapeApp(t *testing.T) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sim := pvesim.New(pvesim.Options{Nodes: []string{"pve1", "pve2"}, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	srv := simtest.Start(t, sim)
	for i, node := range []string{"pve1", "pve2"} {
		id := 5001 + i
		if err := sim.SeedGuest(pvesim.Guest{VMID: id, Type: "lxc", Node: node, Running: true, Config: map[string]string{
			"hostname": "ct", "memory": "1024", "swap": "512", "cores": "1", "rootfs": "local-lvm:vm-" + strconv.Itoa(id) + "-disk-0,size=8G",
		}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Defaults()
	cfg.Database = config.Database{Driver: models.SQLite, DSN: filepath.Join(t.TempDir(), "pvebill.db")}
	cfg.Clusters = []config.Cluster{{Name: "default", URL: srv.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Nodes: []string{"pve1", "pve2"}}}
	cfg.Clients = []config.Client{{ID: "whmcs", Secret: "observability-secret-0123", Scopes: []string{config.ScopeBilling}}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	probe := executor.Action{Name: "metrics_probe", Stages: []executor.Stage{"work"}, Run: func(ctx context.Context, r *executor.Run) error {
		return r.Stage(ctx, "work")
	}}
	a, err := buildApp(ctx, cfg, log, stack.MigrateSchema, probe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.db.Close() })
	for i := range 2 {
		id := 5001 + i
		svc := &models.Service{ServiceID: "svc-" + strconv.Itoa(id), ClientID: "whmcs", Plan: "p", GuestType: "container",
			Cluster: "default", VMID: &id, State: models.ServiceActive}
		if err := a.db.InsertService(ctx, svc); err != nil {
			t.Fatal(err)
		}
	}
	a.sched.RunOnce(a.sampler, time.Minute)
	a.sampler.Wait()

	op := &models.Operation{ServiceID: "svc-5001", ClientID: "whmcs", Action: "metrics_probe", Payload: "{}"}
	if err := a.db.InsertOperation(ctx, op); err != nil {
		t.Fatal(err)
	}
	a.exec.Start(context.Background()) // stopped by the cleanup, not by the test's end
	for {
		got, err := a.db.GetOperation(ctx, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if models.IsTerminal(got.State) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("probe operation did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
	a.exec.Stop(ctx)

	hs := httptest.NewServer(a.srv)
	defer hs.Close()
	get := func(path string) []byte {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return body
	}
	get("/healthz")
	before := len(sim.Requests())
	body := get("/metrics")
	if after := len(sim.Requests()); after != before {
		t.Fatalf("a scrape of /metrics made %d Proxmox calls", after-before)
	}
	return body
}

// exportedNames parses an exposition and returns its metric family names.
func exportedNames(t *testing.T, body []byte) map[string]bool {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	out := map[string]bool{}
	for name := range fams {
		out[name] = true
	}
	return out
}

var metricName = regexp.MustCompile(`\bpvebill_[a-z0-9_]+`)

// usedNames collects the pvebill metric names in the dashboard's queries and the alert rules.
func usedNames(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	raw, err := os.ReadFile("docker/grafana/dashboards/pvebill.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, n := range metricName.FindAllString(tg.Expr, -1) {
				out[n] = append(out[n], "dashboard: "+p.Title)
			}
		}
	}
	for _, v := range dash.Templating.List {
		for _, n := range metricName.FindAllString(v.Definition, -1) {
			out[n] = append(out[n], "dashboard variable")
		}
	}
	raw, err = os.ReadFile("docker/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, n := range metricName.FindAllString(r.Expr, -1) {
				out[n] = append(out[n], "alert "+r.Alert)
			}
		}
	}
	return out
}

var definedName = regexp.MustCompile(`^pvebill_[a-z0-9_]*[a-z0-9]$`)

// definedNames returns the metric family names the server's own code defines: every string
// literal that is a whole pvebill_<name> in the module's non-test Go files (scripts/ aside;
// nested modules are not the server). A family whose series exist only in some states (several
// database nodes, a listed backup, a guest stopped by enforcement) is defined there even when a
// scrape of a fresh server lacks it.
func definedNames(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "scripts" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && definedName.MatchString(v) {
					out[v] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// knownNames is every pvebill metric family of the server: those of a real scrape and those its
// code defines.
func knownNames(t *testing.T, exported map[string]bool) map[string]bool {
	t.Helper()
	out := definedNames(t)
	for name := range exported {
		if strings.HasPrefix(name, "pvebill_") {
			out[name] = true
		}
	}
	return out
}

// Every metric name the Grafana dashboard and the alert rules use is one the server exports
// (histogram series by their family name): on a real scrape that never calls Proxmox, or, for a
// family whose series need a state a fresh server lacks (several database nodes, a listed
// backup), defined by the server's code. The scrape also passes `promtool check metrics`.
// R33: the dashboard and the alert rules use exactly the names pvebill exports.
func TestDashboardsAndAlertsUseExportedNames(t *testing.T) {
	body := scrapeApp(t)
	exported := knownNames(t, exportedNames(t, body))
	used := usedNames(t)
	if len(used) < 10 {
		t.Fatalf("only %d metric names found in the dashboard and alerts: %v", len(used), used)
	}
	var missing []string
	for name, where := range used {
		base := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok && exported[b] {
				base = b
			}
		}
		if !exported[base] {
			missing = append(missing, name+" ("+strings.Join(where, "; ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("names not exported by the server:\n  %s", strings.Join(missing, "\n  "))
	}
	// The per-guest series carry exactly the documented labels, at most five per guest.
	// The retry give-ups are exported at 0 from the start, so that an alert sees the first one
	// as an increase.
	for _, want := range []string{`pvebill_guest_swap_bytes{client_id="whmcs",cluster="default",guest_type="container",node="pve1",service_id="svc-5001",vmid="5001"}`,
		`pvebill_swap_sampling_rounds_total{cluster="default",node="pve2",result="ok"} 1`,
		`pvebill_db_tx_retries_exhausted_total{code="1213"} 0`, `pvebill_db_tx_retries_exhausted_total{code="1047"} 0`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	perGuest := bytes.Count(body, []byte(`service_id="svc-5001"`))
	if perGuest == 0 || perGuest > 5 {
		t.Errorf("%d series for one guest, want 1..5", perGuest)
	}

	promtool := promtoolPath(t)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// panelExempt names the pvebill families that are on no dashboard panel, each with the reason.
// None today: every family the server defines or exports is on a panel.
var panelExempt = map[string]string{}

// Every pvebill metric family the server exports or defines is in some panel expression of the
// Grafana dashboard, or exempt with a reason (and an exemption names a family that is on no
// panel). Alert rules do not count: an operator reads a panel before an alert fires.
// R33: the dashboard ships what pvebill exports.
func TestEveryMetricFamilyIsOnAPanel(t *testing.T) {
	families := knownNames(t, exportedNames(t, scrapeApp(t)))
	if len(families) < 30 {
		t.Fatalf("only %d pvebill families found: %v", len(families), families)
	}
	onPanel := map[string]bool{}
	for name, where := range usedNames(t) {
		for _, w := range where {
			if strings.HasPrefix(w, "dashboard: ") {
				base := name
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suf); ok && families[b] {
						base = b
					}
				}
				onPanel[base] = true
			}
		}
	}
	var missing []string
	for name := range families {
		if !onPanel[name] && panelExempt[name] == "" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("families on no dashboard panel (add a panel, or an exemption with its reason):\n  %s", strings.Join(missing, "\n  "))
	}
	for name := range panelExempt {
		if !families[name] || onPanel[name] {
			t.Errorf("stale exemption %s: not a family of the server, or on a panel", name)
		}
	}
}

// The alert rules are valid and their unit tests pass (promtool test rules).
func TestAlertRules(t *testing.T) {
	promtool := promtoolPath(t)
	for _, args := range [][]string{{"check", "config", "prometheus.yml"}, {"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "docker/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every alert rule has a unit test in alerts_test.yml in which it fires (and a test that only
// ever expects silence does not count). Needs no promtool: it reads the two files.
func TestEveryAlertFiresInATest(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	for file, v := range map[string]any{"docker/prometheus/alerts.yml": &rules, "docker/prometheus/alerts_test.yml": &tests} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if !fires[r.Alert] {
				t.Errorf("alert %s fires in no test of alerts_test.yml", r.Alert)
			}
		}
	}
	if n < 14 {
		t.Errorf("only %d alert rules read", n)
	}
}

// promtoolPath finds promtool; CI (CI set) must have it, a developer machine may skip.
func promtoolPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is required in CI (.ci/run installs Debian's prometheus package)")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	return p
}
