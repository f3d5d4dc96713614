package server

import (
	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/power"
)

// The customer's power actions (R40): each answers an operation like the other lifecycle
// routes. Start, stop and reboot take no body (an empty object at most); shutdown takes an
// optional timeout_seconds.

func (s *Server) startService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.power.Start(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) stopService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.power.Stop(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) shutdownService(c *gin.Context) error {
	var req power.ShutdownRequest
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.power.Shutdown(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

func (s *Server) rebootService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.power.Reboot(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}
