package server

import (
	"github.com/gin-gonic/gin"

	"pvebill/server/config"
)

// routes is the whole route table. Every route here is in openapi.yaml (a test compares them).
func (s *Server) routes() {
	e := s.engine
	e.NoRoute(s.noRoute)
	e.NoMethod(s.noMethod)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metricsHandler())
	e.GET("/openapi.yaml", s.openAPI)

	billing := s.V1(config.ScopeBilling, config.ScopeAdmin)
	billing.GET("/operations/:id", s.getOperation)
	billing.POST("/services", s.createService)
	billing.GET("/services/:service_id", s.getService)
	billing.POST("/services/:service_id/suspend", s.suspendService)
	billing.POST("/services/:service_id/unsuspend", s.unsuspendService)
	billing.POST("/services/:service_id/terminate", s.terminateService)
	billing.POST("/services/:service_id/change-plan", s.changePlan)
	billing.POST("/services/:service_id/reinstall/preview", s.previewReinstall)
	billing.GET("/services/:service_id/reinstall", s.getReinstall)
	billing.GET("/services/:service_id/reinstall/:intent_id", s.getReinstall)
	billing.POST("/services/:service_id/reinstall", s.applyReinstall)
	billing.GET("/usage", s.getUsage)

	shop := s.V1(config.ScopeStorefront, config.ScopeBilling, config.ScopeAdmin)
	shop.GET("/plans", s.listPlans)
	shop.GET("/plans/:code", s.getPlan)

	admin := s.V1(config.ScopeAdmin)
	admin.PUT("/admin/plans/:code", s.putPlan)
	admin.DELETE("/admin/plans/:code", s.deletePlan)
	admin.GET("/admin/guests", s.listGuests)
	admin.POST("/admin/services/:service_id/reconcile", s.reconcileService)
	admin.PUT("/admin/ip-pools/:name", s.putIPPool)
	admin.GET("/admin/ip-pools", s.listIPPools)
	admin.DELETE("/admin/ip-pools/:name", s.deleteIPPool)
	admin.GET("/admin/callbacks", s.listCallbacks)
}

func (s *Server) noRoute(c *gin.Context)  { writeProblem(c, routeNotFound()) }
func (s *Server) noMethod(c *gin.Context) { writeProblem(c, methodNotAllowed()) }
