// Command pvebill is the provisioning server between billing systems and Proxmox VE clusters.
//
//	pvebill serve [--config FILE]     run the server (no --config: the embedded default)
//	pvebill migrate --config FILE     bring the database schema up to date
//	pvebill sim --listen ADDR         run the Proxmox VE simulator alone
//	pvebill call --config FILE METHOD PATH [BODY_FILE]   sign and send one request
//	pvebill healthcheck [--config FILE]  exit 0 when the server's /healthz answers 200
//	pvebill agent --config agent.yaml [--check]  run the agent next to Proxmox
//	pvebill agent keygen --out FILE      write the agent's private key, print its public key
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

//go:embed openapi.yaml
var openAPISpec []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command; ctx ending (SIGINT/SIGTERM) stops a server gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return cmdMigrate(args[1:], stdout, stderr)
	case "call":
		return cmdCall(ctx, args[1:], stdout, stderr)
	case "sim":
		return cmdSim(ctx, args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], stdout, stderr)
	case "secret":
		return cmdSecret(args[1:], stdout, stderr)
	case "agent":
		return cmdAgent(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "pvebill: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	_, _ = fmt.Fprint(w, `usage:
  pvebill serve [--config FILE]                      run the server (no --config: SQLite + built-in simulator)
  pvebill migrate --config FILE                      bring the database schema up to date
  pvebill sim --listen ADDR                          run the Proxmox VE simulator alone
  pvebill call --config FILE [--client ID] [--verbose] METHOD PATH [BODY_FILE]   sign and send one request
  pvebill healthcheck [--config FILE]                exit 0 when the server's /healthz answers 200, else 1
  pvebill secret --out FILE                          write a random secret into FILE unless it holds one
  pvebill agent --config agent.yaml [--check]        run the agent next to Proxmox (--check: verify once and exit)
  pvebill agent keygen --out FILE                    write the agent's private key (0600), print its public key
`)
}
