package server

import (
	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/password"
)

// changePassword is POST /v1/services/{service_id}/password (R56): 202 with the operation
// `password`, or the refusal. The body's password is never logged or stored (R26).
func (s *Server) changePassword(c *gin.Context) error {
	var req password.Request
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.password.Change(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}
