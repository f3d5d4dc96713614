package server

import (
	"bytes"
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/provision"
)

// createService is POST /v1/services. A repeat of an existing create answers its operation:
// 200 when it has finished, else 202 (R36).
func (s *Server) createService(c *gin.Context) error {
	var req provision.CreateRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	op, created, err := s.prov.Create(c.Request.Context(), client(c).ID, req)
	if err != nil {
		return err
	}
	if !created && models.IsTerminal(op.State) {
		c.Header("Location", "/v1/operations/"+op.ID)
		writeJSON(c, http.StatusOK, operationBody{operationView(op, lang(c))})
		return nil
	}
	return s.acceptOperation(c, op)
}

// getService is GET /v1/services/{id}: a billing client's own service, or any client's for an
// admin (serviceClient).
func (s *Server) getService(c *gin.Context) error {
	owner, err := s.serviceClient(c, c.Param("service_id"))
	if err != nil {
		return err
	}
	v, err := s.prov.Get(c.Request.Context(), owner, c.Param("service_id"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, serviceBody{v})
	return nil
}

// serviceBody is the {"service": …} answer.
type serviceBody struct {
	Service provision.ServiceView `json:"service"`
}

// bindOptional binds a body that may be absent (an empty body is an empty object).
func bindOptional(c *gin.Context, v any) error {
	if len(bytes.TrimSpace(rawBody(c))) == 0 {
		return validateStruct(v)
	}
	return bindJSON(c, v)
}

func (s *Server) suspendService(c *gin.Context) error {
	var req provision.SuspendRequest
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Suspend(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

func (s *Server) unsuspendService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Unsuspend(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) terminateService(c *gin.Context) error {
	var req struct{}
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.prov.Terminate(c.Request.Context(), client(c).ID, c.Param("service_id"))
	})
}

func (s *Server) changePlan(c *gin.Context) error {
	var req provision.ChangePlanRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.prov.ChangePlan(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

// mutate binds body (when not nil), calls the provisioning layer and answers the operation.
func (s *Server) mutate(c *gin.Context, body any, call func() (*models.Operation, error)) error {
	if body != nil {
		if err := bindOptional(c, body); err != nil {
			return err
		}
	}
	op, err := call()
	if err != nil {
		return err
	}
	return s.acceptOperation(c, op)
}
