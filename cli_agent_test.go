package main

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pvebill/modules/agent"
	"pvebill/modules/pve/pvesim/simtest"
)

// R57: keygen writes the private key for its owner only, prints the public key in the form
// pvebill's config takes, and never overwrites a key.
func TestAgentKeygen(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.key")
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"agent", "keygen", "--out", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	pub, err := agent.ParsePublicKey(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("printed %q: %v", out.String(), err)
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode().Perm(), err)
	}
	priv, err := agent.LoadPrivateKey(file)
	if err != nil || !priv.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatalf("the file's key does not match the printed one: %v", err)
	}
	before, _ := os.ReadFile(file)
	out.Reset()
	if code := run(t.Context(), []string{"agent", "keygen", "--out", file}, &out, &errb); code != 1 {
		t.Fatalf("second keygen over the same file: exit %d", code)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) || out.Len() != 0 {
		t.Fatal("an existing key was overwritten")
	}
}

// `pvebill agent --check` reaches Proxmox with the agent's token and passes pvebill's
// handshake once; a cluster pvebill does not know fails the check.
func TestAgentCheck(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "agent.key")
	pub, err := agent.GenerateKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	hub := agent.NewHub(agent.HubOptions{Keys: map[string]ed25519.PublicKey{"c1": pub}})
	mux := http.NewServeMux()
	mux.Handle("GET "+agent.ConnectPath, hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	sim := simtest.Start(t, nil)
	write := func(cluster string) string {
		p := filepath.Join(dir, cluster+".yaml")
		body := "server: " + srv.URL + "\ncluster: " + cluster + "\nprivate_key_file: agent.key\nproxmox:\n  url: " + sim.URL +
			"\n  token_id: \"" + simtest.TokenID + "\"\n  token_secret: \"" + simtest.TokenSecret + "\"\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", write("c1"), "--check"}, &out, &errb); code != 0 {
		t.Fatalf("check: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "ok") {
		t.Fatalf("check said %q", out.String())
	}
	errb.Reset()
	if code := run(t.Context(), []string{"agent", "--config", write("c9"), "--check"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), agent.FailUnknownClust) {
		t.Fatalf("unknown cluster: exit %d: %s", code, errb.String())
	}
	if strings.Contains(errb.String(), simtest.TokenSecret) {
		t.Fatal("the token secret was printed")
	}
}
