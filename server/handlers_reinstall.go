package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/reinstall"
)

// defaultPreviewWait is how long a preview request waits for phase 1 when it names no ?wait=N.
const defaultPreviewWait = 5 * time.Second

// previewReinstall is POST /v1/services/{id}/reinstall/preview (phase 1, R18): it queues the
// read-only preview and waits for it (?wait=N, default 5 s): 200 with the ready intent, or 202
// with the intent still preview_pending.
func (s *Server) previewReinstall(c *gin.Context) error {
	var req reinstall.PreviewRequest
	if err := bindOptional(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	in, op, err := s.reinst.Preview(ctx, client(c).ID, c.Param("service_id"), req)
	if err != nil {
		return err
	}
	return s.answerPreview(c, in, op, "reinstall", s.reinst.Get)
}

// answerPreview waits for a preview's operation (?wait=N, default 5 s) and answers the intent,
// read again through get: 200 when it is ready, 202 while it is preview_pending.
func (s *Server) answerPreview(c *gin.Context, in *models.Intent, op *models.Operation, route string,
	get func(ctx context.Context, clientID, serviceID, intentID string) (*models.Intent, error)) error {
	ctx := c.Request.Context()
	s.exec.Kick()
	wait := waitOf(c)
	if _, given := c.GetQuery("wait"); !given {
		wait = defaultPreviewWait
	}
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		_, err := executor.WaitTerminal(wctx, s.db, s.exec.Broker(), op.ID, s.recheck)
		cancel()
		if err != nil {
			return err
		}
	}
	in, err := get(ctx, client(c).ID, in.ServiceID, in.ID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if in.State == models.IntentPreviewPending {
		status = http.StatusAccepted
	}
	c.Header("Location", "/v1/services/"+in.ServiceID+"/"+route+"/"+in.ID)
	writeJSON(c, status, gin.H{"intent": reinstall.ViewOf(in, lang(c))})
	return nil
}

// getReinstall is GET /v1/services/{id}/reinstall[/{intent_id}]: the intent, advanced on read
// (R29).
func (s *Server) getReinstall(c *gin.Context) error {
	owner, err := s.serviceClient(c, c.Param("service_id"))
	if err != nil {
		return err
	}
	in, err := s.reinst.Get(c.Request.Context(), owner, c.Param("service_id"), c.Param("intent_id"))
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"intent": reinstall.ViewOf(in, lang(c))})
	return nil
}

// applyReinstall is POST /v1/services/{id}/reinstall (phase 2, R22): confirmations {key,
// volume}; the root password is handed to the run in memory only (R26). It answers the
// operation.
func (s *Server) applyReinstall(c *gin.Context) error {
	var req reinstall.ApplyRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	op, _, err := s.reinst.Apply(c.Request.Context(), client(c).ID, c.Param("service_id"), req)
	if err != nil {
		return err
	}
	return s.acceptOperation(c, op)
}

// reconcileService is POST /v1/admin/services/{id}/reconcile (R28): an operator closes
// needs_reconciliation and releases the service lock; recorded in the audit log.
func (s *Server) reconcileService(c *gin.Context) error {
	var req reinstall.ReconcileRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	owner, err := s.serviceClient(c, c.Param("service_id"))
	if err != nil {
		return err
	}
	key := models.ServiceKey{ClientID: owner, ServiceID: c.Param("service_id")}
	svc, err := s.reinst.Reconcile(c.Request.Context(), client(c).ID, key, req)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"reconciliation": gin.H{"service_id": svc.ServiceID, "client_id": svc.ClientID,
		"state": svc.State, "resolution": req.Resolution}})
	return nil
}
