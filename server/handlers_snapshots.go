package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/snapshots"
)

// The snapshot routes (R44; docs/api.md Snapshots). The changes answer an operation like the
// other lifecycle routes; the list is read from Proxmox at the time of the request.

// listSnapshots is GET /v1/services/{id}/snapshots: a billing client's own service, or any
// client's for an admin (serviceClient, R46).
func (s *Server) listSnapshots(c *gin.Context) error {
	owner, err := s.serviceClient(c, c.Param("service_id"))
	if err != nil {
		return err
	}
	list, err := s.snaps.Snapshots(c.Request.Context(), owner, c.Param("service_id"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, list)
	return nil
}

func (s *Server) createSnapshot(c *gin.Context) error {
	var req snapshots.SnapshotRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.snaps.CreateSnapshot(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

func (s *Server) deleteSnapshot(c *gin.Context) error {
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.snaps.DeleteSnapshot(c.Request.Context(), client(c).ID, c.Param("service_id"), c.Param("name"))
	})
}

func (s *Server) rollbackSnapshot(c *gin.Context) error {
	var req snapshots.RollbackRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.snaps.RollbackSnapshot(c.Request.Context(), client(c).ID, c.Param("service_id"), c.Param("name"), req)
	})
}
