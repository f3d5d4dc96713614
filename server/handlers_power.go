package server

import (
	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/provision"
)

// The customer's power actions (R40): each answers an operation like the other lifecycle
// routes. Start, stop and reboot take no body (an empty object at most); shutdown takes an
// optional timeout_seconds.

func (s *Server) startService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Start(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) stopService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Stop(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) shutdownService(c *gin.Context) error {
	var req provision.ShutdownRequest
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Shutdown(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

func (s *Server) rebootService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Reboot(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}
