package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/modules/operation"
)

// listGuests is GET /v1/admin/guests: every guest of every cluster, its guest_type read from
// Proxmox's type (R3), with the managing service_id when there is one.
func (s *Server) listGuests(c *gin.Context) error {
	guests, err := s.prov.Guests(c.Request.Context())
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"guests": guests})
	return nil
}

// listNodes answers GET /v1/admin/clusters/{cluster}/nodes: each node's capacity figures and,
// for a node that is no candidate, why (R52).
func (s *Server) listNodes(c *gin.Context) error {
	nodes, err := s.nodes.Nodes(c.Request.Context(), c.Param("cluster"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"nodes": nodes})
	return nil
}

// listReconciliations is GET /v1/admin/reconciliations: the operations an operator must look
// at (R28, R58), oldest first, with the facts found, the reason and a suggested resolution;
// ?limit= 1–500 (default 500).
func (s *Server) listReconciliations(c *gin.Context) error {
	limit, fe, given := pageLimit(c, 500)
	if len(fe) > 0 {
		return i18n.Validation(fe...)
	}
	if !given {
		limit = 500
	}
	list, err := operation.Reconciliations(c.Request.Context(), s.db, limit)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"reconciliations": list})
	return nil
}
