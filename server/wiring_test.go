package server_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/modules/stack/stacktest"
	"pvebill/server"
	"pvebill/server/config"
)

// A server is never built without a service its routes call: New names what is missing.
func TestNewRefusesMissingDependencies(t *testing.T) {
	h := newHarness(t, "sqlite")
	full := stacktest.WithServices(server.Options{Config: config.Defaults(), DB: h.db, Executor: h.exec,
		Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	for name, drop := range map[string]func(*server.Options){
		"Provision": func(o *server.Options) { o.Provision = nil },
		"Reinstall": func(o *server.Options) { o.Reinstall = nil },
		"Plans":     func(o *server.Options) { o.Plans = nil },
		"IPPools":   func(o *server.Options) { o.IPPools = nil },
		"Console":   func(o *server.Options) { o.Console = nil },
		"Password":  func(o *server.Options) { o.Password = nil },
		"RDNS":      func(o *server.Options) { o.RDNS = nil },
		"Executor":  func(o *server.Options) { o.Executor = nil },
		"DB":        func(o *server.Options) { o.DB = nil },
	} {
		o := full
		o.Registry = prometheus.NewRegistry()
		drop(&o)
		func() {
			defer func() {
				if p := fmt.Sprint(recover()); !strings.Contains(p, name) {
					t.Errorf("without %s: New panicked with %q", name, p)
				}
			}()
			server.New(o)
		}()
	}
}

// server talks to Proxmox only through the services it is given: no file of the package imports
// the Proxmox client or a guest module.
func TestServerDoesNotImportProxmox(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			for _, banned := range []string{"pvebill/modules/pve", "pvebill/modules/lxc", "pvebill/modules/qemu"} {
				if path == banned || strings.HasPrefix(path, banned+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
