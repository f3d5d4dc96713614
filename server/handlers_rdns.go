package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/rdns"
)

// Reverse DNS (R55, docs/api.md Reverse DNS): the PTR records of the addresses a service holds.

// rdnsBody is the {"rdns": […]} answer, ordered by address.
type rdnsBody struct {
	RDNS []rdns.Record `json:"rdns"`
}

// putRDNS is PUT /v1/services/{service_id}/rdns: 200 with the service's records once the new
// one is recorded; its status says whether PowerDNS has it yet.
func (s *Server) putRDNS(c *gin.Context) error {
	var req rdns.SetRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	k := models.ServiceKey{ClientID: client(c).ID, ServiceID: c.Param("service_id")}
	list, err := s.rdns.Set(c.Request.Context(), k, req)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, rdnsBody{list})
	return nil
}

// listRDNS is GET /v1/services/{service_id}/rdns: a billing client's own service, or any
// client's for an admin (serviceClient).
func (s *Server) listRDNS(c *gin.Context) error {
	owner, err := s.serviceClient(c, c.Param("service_id"))
	if err != nil {
		return err
	}
	list, err := s.rdns.List(c.Request.Context(), models.ServiceKey{ClientID: owner, ServiceID: c.Param("service_id")})
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, rdnsBody{list})
	return nil
}
