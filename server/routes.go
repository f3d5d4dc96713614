package server

import (
	"github.com/gin-gonic/gin"
	"net/http"

	"pvebill/modules/agent"
	"pvebill/server/config"
)

// routes is the whole route table. Every route here is in openapi.yaml (a test compares them);
// every GET route answers HEAD too (RFC 9110: the same status and headers, no body).
func (s *Server) routes() {
	e := s.engine
	e.NoRoute(s.noRoute)
	e.NoMethod(s.noMethod)

	get(e, "/healthz", s.h(s.healthz))
	get(e, "/readyz", s.h(s.readyz))
	get(e, "/metrics", s.h(s.metricsHandler()))
	get(e, "/openapi.yaml", s.h(s.openAPI))
	get(e, consolePrefix+"/:token", s.h(s.consolePage))
	e.GET(consolePrefix+"/:token/ws", s.h(s.consoleSocket))
	get(e, consoleAssetsPrefix+"/*file", consoleAssets)
	// The agents' WebSocket (R57): authenticated by the handshake inside it, not by a signature.
	e.GET(agent.ConnectPath, gin.WrapH(s.agents))
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		e.Handle(m, agent.ForwardPath+"/*path", gin.WrapF(s.agents.ServeForward))
	}

	billing := s.V1(config.ScopeBilling, config.ScopeAdmin)
	get(billing, "/operations/:id", s.h(s.getOperation))
	billing.POST("/services", s.h(s.createService))
	get(billing, "/services", s.h(s.listServices))
	get(billing, "/services/:service_id", s.h(s.getService))
	billing.POST("/services/:service_id/suspend", s.h(s.suspendService))
	billing.POST("/services/:service_id/unsuspend", s.h(s.unsuspendService))
	billing.POST("/services/:service_id/terminate", s.h(s.terminateService))
	billing.POST("/services/:service_id/change-plan", s.h(s.changePlan))
	billing.POST("/services/:service_id/password", s.h(s.changePassword))
	billing.POST("/services/:service_id/start", s.h(s.startService))
	billing.POST("/services/:service_id/stop", s.h(s.stopService))
	billing.POST("/services/:service_id/shutdown", s.h(s.shutdownService))
	billing.POST("/services/:service_id/reboot", s.h(s.rebootService))
	billing.POST("/services/:service_id/snapshots", s.h(s.createSnapshot))
	get(billing, "/services/:service_id/snapshots", s.h(s.listSnapshots))
	billing.DELETE("/services/:service_id/snapshots/:name", s.h(s.deleteSnapshot))
	billing.POST("/services/:service_id/snapshots/:name/rollback", s.h(s.rollbackSnapshot))
	billing.POST("/services/:service_id/backups", s.h(s.createBackup))
	get(billing, "/services/:service_id/backups", s.h(s.listBackups))
	billing.DELETE("/services/:service_id/backups/:backup_id", s.h(s.deleteBackup))
	billing.POST("/services/:service_id/reinstall/preview", s.h(s.previewReinstall))
	get(billing, "/services/:service_id/reinstall", s.h(s.getReinstall))
	get(billing, "/services/:service_id/reinstall/:intent_id", s.h(s.getReinstall))
	billing.POST("/services/:service_id/reinstall", s.h(s.applyReinstall))
	billing.POST("/services/:service_id/restore/preview", s.h(s.previewRestore))
	get(billing, "/services/:service_id/restore", s.h(s.getRestore))
	get(billing, "/services/:service_id/restore/:intent_id", s.h(s.getRestore))
	billing.POST("/services/:service_id/restore", s.h(s.applyRestore))
	billing.PUT("/services/:service_id/rdns", s.h(s.putRDNS))
	get(billing, "/services/:service_id/rdns", s.h(s.listRDNS))
	get(billing, "/usage", s.h(s.getUsage))
	get(billing, "/services/:service_id/usage/series", s.h(s.getUsageSeries))

	// The console's answer is a credential: no Idempotency-Key replay stores it.
	consoleRoute := s.engine.Group("/v1", bodyMiddleware(), s.authMiddleware(),
		requireScope(config.ScopeBilling, config.ScopeAdmin), queryMiddleware)
	consoleRoute.POST("/services/:service_id/console", s.h(s.openConsole))

	shop := s.V1(config.ScopeStorefront, config.ScopeBilling, config.ScopeAdmin)
	get(shop, "/plans", s.h(s.listPlans))
	get(shop, "/plans/:code", s.h(s.getPlan))

	admin := s.V1(config.ScopeAdmin)
	admin.PUT("/admin/plans/:code", s.h(s.putPlan))
	admin.DELETE("/admin/plans/:code", s.h(s.deletePlan))
	get(admin, "/admin/guests", s.h(s.listGuests))
	admin.POST("/admin/services/:service_id/reconcile", s.h(s.reconcileService))
	admin.PUT("/admin/ip-pools/:name", s.h(s.putIPPool))
	get(admin, "/admin/ip-pools", s.h(s.listIPPools))
	admin.DELETE("/admin/ip-pools/:name", s.h(s.deleteIPPool))
	get(admin, "/admin/callbacks", s.h(s.listCallbacks))
	get(admin, "/admin/clusters/:cluster/nodes", s.h(s.listNodes))
	admin.PUT("/admin/clusters/:cluster/nodes/:node/maintenance", s.h(s.setMaintenance))
	admin.POST("/admin/services/:service_id/migrate", s.h(s.migrateService))
	get(admin, "/admin/reconciliations", s.h(s.listReconciliations))
}

func (s *Server) noRoute(c *gin.Context)  { writeProblem(c, routeNotFound()) }
func (s *Server) noMethod(c *gin.Context) { writeProblem(c, methodNotAllowed()) }

// get registers h for GET and HEAD on path; net/http drops the body of a HEAD answer.
func get(r gin.IRoutes, path string, h gin.HandlerFunc) {
	r.GET(path, h)
	r.HEAD(path, h)
}
