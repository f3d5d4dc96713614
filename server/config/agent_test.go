package config

import (
	"errors"
	"strings"
	"testing"
)

const agentKey = "ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

const withAgent = `
listen: "127.0.0.1:9090"
database:
  driver: sqlite
  dsn: "pvebill.db"
clients:
  - id: whmcs
    secret: "test-client-secret-0123456789abcdef"
    scopes: [billing]
clusters:
  - name: behind-nat
    nodes: [pve1]
    agent:
      public_key: "` + agentKey + `"
`

// R57: a cluster reached through an agent names only the agent's public key; every Proxmox
// endpoint or credential beside it is refused at start, naming the key.
func TestAgentClusterConfig(t *testing.T) {
	cfg, err := Load(write(t, withAgent), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Clusters[0].Agent == nil || cfg.Clusters[0].Agent.PublicKey != agentKey {
		t.Fatalf("%+v", cfg.Clusters[0])
	}
	beside := map[string]string{
		"url": `url: "https://pve1:8006"`, "token_id": `token_id: "a@pve!b"`, "token_secret": `token_secret: "s3cret-token"`,
		"fingerprint": `fingerprint: "AA:BB"`, "insecure_skip_verify": `insecure_skip_verify: true`,
		"console_user": `console_user: "console@pve"`, "console_password": `console_password: "s3cret-console"`,
	}
	for key, line := range beside {
		body := strings.Replace(withAgent, "    agent:\n", "    "+line+"\n    agent:\n", 1)
		_, err := Load(write(t, body), nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "clusters[0]."+key {
			t.Errorf("%s beside agent: %v, want an error naming clusters[0].%s", key, err, key)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error repeats the secret: %v", key, err)
		}
	}
	for _, bad := range []string{"", "ssh-ed25519 AAAA", "ed25519:AAAA", "ed25519:" + strings.Repeat("A", 44)} {
		_, err := Load(write(t, strings.Replace(withAgent, agentKey, bad, 1)), nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "clusters[0].agent.public_key" {
			t.Errorf("public key %q: %v", bad, err)
		}
	}
	// The environment reaches the key too.
	cfg, err = Load(write(t, strings.Replace(withAgent, agentKey, "x", 1)),
		[]string{"PVEBILL_CLUSTERS_0_AGENT_PUBLIC_KEY=" + agentKey})
	if err != nil || cfg.Clusters[0].Agent.PublicKey != agentKey {
		t.Fatalf("from the environment: %v", err)
	}
}
