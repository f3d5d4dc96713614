// Package serve joins the two halves of the composition root: the modules' stack
// (modules/stack), which knows nothing of HTTP, and the HTTP server (server), which knows
// nothing of how the modules are wired.
package serve

import (
	"pvebill/modules/stack"
	"pvebill/server"
	"pvebill/server/config"
)

// Options are the server's options over the stack; the caller adds what only it knows (the
// OpenAPI document, a test clock) before server.New.
func Options(st *stack.Stack, cfg config.Config) server.Options {
	return server.Options{Config: cfg, DB: st.DB, Executor: st.Exec, Registry: st.Metrics, Logger: st.Log,
		Plans: st.Plans, IPPools: st.IPPools, Provision: st.Provisioner, Reinstall: st.Replacer, Console: st.Console,
		Password: st.Password, RDNS: st.RDNS, Agents: st.Agents, Moves: st.Moves, Readiness: st.Readiness,
		Nodes: st.Placement, Snapshots: st.Snapshots, Backups: st.Backups, Power: st.Power}
}
