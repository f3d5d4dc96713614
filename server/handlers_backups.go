package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/backups"
)

// Backups (R42, docs/api.md Backups): a backup now and a delete are operations like a power
// action; the list answers at once. A backup id is looked up in the service's own list,
// never sent to Proxmox as given.

func (s *Server) createBackup(c *gin.Context) error {
	var req backups.BackupRequest
	return s.mutate(c, &req, func() (*models.Operation, error) {
		return s.backups.Backup(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	})
}

// backupsBody is the {"backups": […]} answer, oldest first.
type backupsBody struct {
	Backups []backups.Backup `json:"backups"`
}

func (s *Server) listBackups(c *gin.Context) error {
	list, err := s.backups.Backups(c.Request.Context(), client(c).ID, c.Param("service_id"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, backupsBody{list})
	return nil
}

func (s *Server) deleteBackup(c *gin.Context) error {
	return s.mutate(c, nil, func() (*models.Operation, error) {
		return s.backups.DeleteBackup(c.Request.Context(), client(c).ID, c.Param("service_id"), c.Param("backup_id"))
	})
}
