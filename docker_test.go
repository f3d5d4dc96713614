package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"pvebill/modules/plans"
	"pvebill/server/config"
)

// composeFile is the part of docker/compose.yaml the tests read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string   `yaml:"image"`
	Command     []string `yaml:"command"`
	Volumes     []string `yaml:"volumes"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	DependsOn dependsOn `yaml:"depends_on"`
}

// dependsOn is compose's depends_on in either form: a list of names or a map of conditions.
type dependsOn map[string]struct {
	Condition string `yaml:"condition"`
}

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var names []string
		if err := n.Decode(&names); err != nil {
			return err
		}
		*d = dependsOn{}
		for _, name := range names {
			(*d)[name] = struct {
				Condition string `yaml:"condition"`
			}{"service_started"}
		}
		return nil
	}
	return n.Decode((*map[string]struct {
		Condition string `yaml:"condition"`
	})(d))
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile("docker/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// containerFS stands in for the engine's mounts: each service's volumes appear under root at
// their container paths (a named volume is one folder shared by every service that mounts it,
// a bind mount a copy of the repository's file), and container paths in commands and mounted
// files are rewritten to root's. The engine itself is not needed.
type containerFS struct {
	t       *testing.T
	root    string
	targets []string // every container path a volume is mounted at
}

func (fs *containerFS) path(p string) string {
	for _, dst := range fs.targets {
		if p == dst || strings.HasPrefix(p, dst+"/") || strings.HasPrefix(dst, p+"/") {
			return filepath.Join(fs.root, p)
		}
	}
	return p
}

func (fs *containerFS) rewrite(text string) string {
	var pairs []string
	for _, dst := range fs.targets {
		pairs = append(pairs, dst, filepath.Join(fs.root, dst))
	}
	return strings.NewReplacer(pairs...).Replace(text) // one pass: nothing is rewritten twice
}

// mount lays out a service's volumes under root.
func (fs *containerFS) mount(svc composeService) {
	fs.t.Helper()
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		src, dst := parts[0], filepath.Join(fs.root, parts[1])
		if !strings.HasPrefix(src, ".") { // a named volume
			if err := os.MkdirAll(dst, 0o700); err != nil {
				fs.t.Fatal(err)
			}
			continue
		}
		raw, err := os.ReadFile(filepath.Join("docker", src))
		if err != nil {
			fs.t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			fs.t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(fs.rewrite(string(raw))), 0o600); err != nil {
			fs.t.Fatal(err)
		}
	}
}

// args is a service's command with container paths rewritten.
func (fs *containerFS) args(cmd []string) []string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		out[i] = fs.path(a)
	}
	return out
}

func newContainerFS(t *testing.T, c composeFile) *containerFS {
	fs := &containerFS{t: t, root: t.TempDir()}
	for _, svc := range c.Services {
		for _, v := range svc.Volumes {
			if dst := strings.Split(v, ":")[1]; !slices.Contains(fs.targets, dst) {
				fs.targets = append(fs.targets, dst)
			}
		}
	}
	return fs
}

// A fresh clone's stack starts as shipped, with no file edited: the services that run the
// pvebill image run, in compose's order, with exactly their commands and mounts: the one-shot
// secret writes the API client's secret into its volume, migrate and serve read it through
// the config's secret_file, the container's own healthcheck passes, and the generated secret
// signs a call that lists the example plans. A second start keeps the secret. What stands in
// for the engine: the mounts (containerFS), SQLite for the mariadb service and an in-process
// simulator for pvesim (PVEBILL_ variables, as an operator would set them), loopback ports.
func TestComposeStackStartsOnAFreshClone(t *testing.T) {
	c := readCompose(t)
	for name, want := range map[string]map[string]string{
		"migrate": {"secret": "service_completed_successfully", "mariadb": "service_healthy"},
		"pvebill": {"migrate": "service_completed_successfully"},
	} {
		for dep, cond := range want {
			if got := c.Services[name].DependsOn[dep].Condition; got != cond {
				t.Errorf("%s depends on %s with %q, want %q", name, dep, got, cond)
			}
		}
	}
	for name, svc := range c.Services {
		for _, v := range svc.Volumes {
			if src := strings.Split(v, ":")[0]; !strings.HasPrefix(src, ".") {
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("%s mounts the undeclared volume %s", name, src)
				}
			}
		}
	}
	fs := newContainerFS(t, c)
	for _, name := range []string{"secret", "migrate", "pvebill"} {
		fs.mount(c.Services[name])
	}
	simCmd := slices.Clone(c.Services["pvesim"].Command)
	if i := slices.Index(simCmd, "--listen"); i < 0 || i+1 >= len(simCmd) {
		t.Fatalf("the pvesim service's command names no --listen: %v", simCmd)
	} else {
		simCmd[i+1] = "127.0.0.1:0" // a loopback port of its own instead of the service's 8006
	}
	simOut, _, _, _ := startCmd(t, simCmd...)
	simURL := waitFor(t, simOut, regexp.MustCompile(`simulator on (http://[0-9.:]+)/api2/json`), 15*time.Second)[1]
	t.Setenv("PVEBILL_DATABASE_DRIVER", "sqlite")
	t.Setenv("PVEBILL_DATABASE_DSN", filepath.Join(t.TempDir(), "pvebill.db"))
	t.Setenv("PVEBILL_CLUSTERS_0_URL", simURL)
	t.Setenv("PVEBILL_LISTEN", "127.0.0.1:0")

	secretArgs := fs.args(c.Services["secret"].Command)
	code, out := runOnce(t, secretArgs...)
	if code != 0 || !strings.Contains(out, "wrote a new secret") {
		t.Fatalf("secret: exit %d: %s", code, out)
	}
	secretPath := secretArgs[len(secretArgs)-1]
	first, err := os.ReadFile(secretPath)
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(first) {
		t.Fatalf("generated secret %q: %v", first, err)
	}
	if fi, _ := os.Stat(secretPath); fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, want 0600", fi.Mode().Perm())
	}
	if code, out := runOnce(t, fs.args(c.Services["migrate"].Command)...); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, out)
	}
	srvOut, srvErr, _, _ := startCmd(t, fs.args(c.Services["pvebill"].Command)...)
	addr := waitFor(t, srvErr, listenRE, 15*time.Second)[1]
	t.Setenv("PVEBILL_LISTEN", addr)
	check := c.Services["pvebill"].Healthcheck.Test
	if len(check) < 3 || check[0] != "CMD" || check[1] != "/usr/local/bin/pvebill" {
		t.Fatalf("the pvebill service's healthcheck does not run `pvebill healthcheck`: %v", check)
	}
	if code, out := runOnce(t, fs.args(check[2:])...); code != 0 {
		t.Fatalf("the container's healthcheck: exit %d: %s\n%s", code, out, srvOut.String())
	}
	cfgPath := fs.args([]string{"/etc/pvebill/pvebill.yaml"})[0]
	code, out = runOnce(t, "call", "--config", cfgPath, "--url", "http://"+addr, "GET", "/v1/plans")
	if code != 0 || !strings.Contains(out, `"plans"`) || !strings.Contains(out, "HTTP 200") {
		t.Fatalf("a call signed with the generated secret: exit %d: %s", code, out)
	}
	if strings.Contains(srvErr.String()+srvOut.String(), strings.TrimSpace(string(first))) {
		t.Error("the generated secret reached the server's output")
	}
	if code, out := runOnce(t, secretArgs...); code != 0 || !strings.Contains(out, "kept the secret") {
		t.Fatalf("secret on a second start: exit %d: %s", code, out)
	}
	if again, _ := os.ReadFile(secretPath); string(again) != string(first) {
		t.Fatal("a second start replaced the secret")
	}
}

// runOnce runs one command to its end and returns its exit code and output.
func runOnce(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, &out, &errb)
	return code, out.String() + errb.String()
}

// The compose stack's pvebill loads the example plans: its config names a plans file, compose
// mounts the examples there, and they parse.
func TestComposeStackLoadsExamplePlans(t *testing.T) {
	c := readCompose(t)
	fs := newContainerFS(t, c)
	fs.mount(c.Services["pvebill"])
	if err := os.WriteFile(fs.path("/var/lib/pvebill/secrets/demo-client-secret"), []byte(strings.Repeat("s", config.MinClientSecret)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(fs.path("/etc/pvebill/pvebill.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := c.Services["pvebill"]
	target := filepath.Join("/etc/pvebill", cfg.PlansFile)
	var source string
	for _, v := range svc.Volumes {
		if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == target {
			source = filepath.Join("docker", parts[0])
		}
	}
	if cfg.PlansFile == "" || source == "" {
		t.Fatalf("plans_file %q is not mounted into the pvebill service: %v", cfg.PlansFile, svc.Volumes)
	}
	src, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := plans.ParseYAML(src)
	if err != nil || len(specs) == 0 {
		t.Fatalf("%s: %d plans, %v", source, len(specs), err)
	}
}

// The image's build context leaves out the demo secret and database, build output and git
// history, and keeps every file the build needs.
func TestDockerIgnoreKeepsSecretsOut(t *testing.T) {
	raw, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	ignored := func(path string) bool {
		for _, p := range patterns {
			for _, cand := range []string{p, strings.TrimPrefix(p, "**/")} {
				for dir := path; dir != "."; dir = filepath.Dir(dir) {
					if ok, _ := filepath.Match(cand, dir); ok {
						return true
					}
					if ok, _ := filepath.Match(cand, filepath.Base(dir)); ok && strings.HasPrefix(p, "**/") {
						return true
					}
				}
			}
		}
		return false
	}
	for _, p := range []string{"data/demo.yaml", "data/pvebill.db", ".git/config", "bin/pvebill", "pvebill"} {
		if !ignored(p) {
			t.Errorf("%s is sent to the build", p)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		rel, err := filepath.Rel(root, fields[0])
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a module from the cache
		}
		for _, f := range append([]string{"."}, fields[1:]...) {
			if p := filepath.Join(rel, f); ignored(p) {
				t.Errorf("%s is needed by the build but ignored", p)
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		if ignored(f) {
			t.Errorf("%s is needed by the build but ignored", f)
		}
	}
}
