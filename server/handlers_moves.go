package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/migrate"
)

// migrateService is POST /v1/admin/services/{service_id}/migrate (R53): 202 with the operation
// `migrate` (a migration already queued for the service is answered instead of a second).
func (s *Server) migrateService(c *gin.Context) error {
	var req migrate.Request
	return s.mutate(c, &req, func() (*models.Operation, error) {
		owner, err := s.serviceClient(c, c.Param("service_id"))
		if err != nil {
			return nil, err
		}
		return s.moves.Migrate(c.Request.Context(), models.ServiceKey{ClientID: owner, ServiceID: c.Param("service_id")}, req)
	})
}

// setMaintenance is PUT /v1/admin/clusters/{cluster}/nodes/{node}/maintenance (R52): the node's
// view after the change and, with drain, the migrate operations queued for its services.
func (s *Server) setMaintenance(c *gin.Context) error {
	var req migrate.MaintenanceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	cluster, node := c.Param("cluster"), c.Param("node")
	ops, err := s.moves.SetMaintenance(ctx, cluster, node, req)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		s.exec.Kick()
	}
	nodes, err := s.nodes.Nodes(ctx, cluster)
	if err != nil {
		return err
	}
	views := make([]OperationView, 0, len(ops))
	for _, op := range ops {
		views = append(views, operationView(op, lang(c)))
	}
	for _, n := range nodes {
		if n.Node == node {
			writeJSON(c, http.StatusOK, gin.H{"node": n, "operations": views})
			return nil
		}
	}
	writeJSON(c, http.StatusOK, gin.H{"node": nil, "operations": views})
	return nil
}
