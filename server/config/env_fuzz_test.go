package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzApplyEnv: whatever the variable's name and value, the overlay does not panic, a refusal
// names the variable, and a list grows by one element at most.
func FuzzApplyEnv(f *testing.F) {
	for _, seed := range [][2]string{
		{"CLUSTERS_0_TOKEN_SECRET", "x"}, {"CLUSTERS_1_NODES", "a, b"}, {"CLUSTERS_0_MEMORY_OVERCOMMIT", "1.5"},
		{"EXECUTOR_LEASE", "45s"}, {"CLIENTS_7_ID", "x"}, {"CLUSTERS_0", "x"}, {"EXECUTOR_WORKERS", "0x10"},
		{"CLUSTERS_0_INSECURE_SKIP_VERIFY", "~"}, {"CLUSTERS__0_URL", "x"}, {"JOBS", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		if strings.Contains(path, "=") || strings.HasPrefix("PVEBILL_"+path, "PVEBILL_TEST_") {
			return
		}
		cfg := Defaults()
		cfg.Clusters = []Cluster{{Name: "default"}}
		cfg.Clients = []Client{{ID: "whmcs"}}
		name := "PVEBILL_" + path
		err := ApplyEnv(&cfg, []string{name + "=" + value})
		var ce *Error
		if err != nil && (!errors.As(err, &ce) || ce.Key != name) {
			t.Fatalf("%s: the error %v does not name the variable", name, err)
		}
		if len(cfg.Clusters) > 2 || len(cfg.Clients) > 2 {
			t.Fatalf("%s grew a list past its next element: %d clusters, %d clients", name, len(cfg.Clusters), len(cfg.Clients))
		}
	})
}
