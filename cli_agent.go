package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"pvebill/modules/agent"
)

// cmdAgent runs the agent next to Proxmox (R57), checks its config (--check), or writes its key
// (keygen).
func cmdAgent(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "keygen" {
		return cmdAgentKeygen(args[1:], stdout, stderr)
	}
	fl := flag.NewFlagSet("agent", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfgPath := fl.String("config", "", "agent config file (agent.yaml)")
	check := fl.Bool("check", false, "verify the config, reach Proxmox and pvebill once, and exit")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" || fl.NArg() != 0 {
		_, _ = fmt.Fprintln(stderr, "usage: pvebill agent --config agent.yaml [--check] | pvebill agent keygen --out FILE")
		return 2
	}
	cfg, err := agent.LoadConfig(*cfgPath)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill agent:", err)
		return 1
	}
	log := newLogger(orDefaultString(cfg.LogFormat, "json"), orDefaultString(cfg.LogLevel, "info"), stderr)
	a, err := agent.New(cfg, agent.Options{Log: log})
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill agent:", err)
		return 1
	}
	if *check {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := a.Check(cctx); err != nil {
			_, _ = fmt.Fprintln(stderr, "pvebill agent --check:", err)
			return 1
		}
		_, _ = fmt.Fprintln(stdout, "ok: Proxmox answers and pvebill accepts this agent for cluster", cfg.Cluster)
		return 0
	}
	log.Info("pvebill agent starting", "server", cfg.Server, "cluster", cfg.Cluster, "public_key", a.PublicKey())
	a.Run(ctx)
	return 0
}

func orDefaultString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// cmdAgentKeygen writes a new private key (0600, never over an existing file) and prints the
// public key for pvebill's cluster config.
func cmdAgentKeygen(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("agent keygen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "", "file to write the private key into (must not exist)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fl.NArg() != 0 {
		_, _ = fmt.Fprintln(stderr, "usage: pvebill agent keygen --out FILE")
		return 2
	}
	pub, err := agent.GenerateKeyFile(*out)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill agent keygen:", err)
		return 1
	}
	_, _ = fmt.Fprintln(stdout, agent.FormatPublicKey(pub))
	return 0
}
