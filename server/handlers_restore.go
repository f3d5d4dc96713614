package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/modules/reinstall"
)

// previewRestore is POST /v1/services/{id}/restore/preview with {"backup_id"} (phase 1 of a
// restore, R43): the backup must be one of the service's own; it answers the intent as a
// reinstall preview does.
func (s *Server) previewRestore(c *gin.Context) error {
	var req reinstall.RestorePreviewRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	in, op, err := s.reinst.RestorePreview(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	if err != nil {
		return err
	}
	return s.answerPreview(c, in, op, "restore", s.reinst.GetRestore)
}

// getRestore is GET /v1/services/{id}/restore[/{intent_id}]: a restore intent, advanced on
// read (R29).
func (s *Server) getRestore(c *gin.Context) error {
	in, err := s.reinst.GetRestore(c.Request.Context(), client(c).ID, c.Param("service_id"), c.Param("intent_id"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"intent": reinstall.ViewOf(in, lang(c))})
	return nil
}

// applyRestore is POST /v1/services/{id}/restore with {"intent_id", "confirmations"} (phase 2
// of a restore, R22, R43). It answers the operation.
func (s *Server) applyRestore(c *gin.Context) error {
	var req reinstall.RestoreApplyRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	op, _, err := s.reinst.ApplyRestore(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	if err != nil {
		return err
	}
	return s.acceptOperation(c, op)
}
