package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"pvebill/modules/plans"
	"pvebill/server/config"
)

// The compose stack's pvebill loads the example plans: its config names a plans file, compose
// mounts the examples there, and they parse.
func TestComposeStackLoadsExamplePlans(t *testing.T) {
	// The file's client secret is a placeholder, refused until replaced: the variable stands
	// in for the operator's.
	cfg, err := config.Load("docker/pvebill.yaml", []string{"PVEBILL_CLIENTS_0_SECRET=" + strings.Repeat("s", config.MinClientSecret)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("docker/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Volumes     []string `yaml:"volumes"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	svc := compose.Services["pvebill"]
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
	if !slices.Contains(svc.Healthcheck.Test, "healthcheck") {
		t.Errorf("the pvebill service has no healthcheck through `pvebill healthcheck`: %v", svc.Healthcheck.Test)
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
