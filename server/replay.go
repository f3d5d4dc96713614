package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
)

// claimsSignature reports whether a request of this method may use its signature once (R47):
// every method that changes something; reads may be repeated.
func claimsSignature(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// claimSignature accepts the verified signature of a mutating request once, across replicas
// (R47): its use is recorded in the database until its timestamp leaves the window, and a
// second use is 401 signature_replayed, with the WWW-Authenticate challenge of the other 401s.
// A billing system's retry is signed again with a new timestamp, so it carries a new signature
// and reaches the Idempotency-Key replay.
func (s *Server) claimSignature(c *gin.Context, cl *APIClient) error {
	if !claimsSignature(c.Request.Method) {
		return nil
	}
	ts, err := strconv.ParseInt(c.GetHeader(HeaderTimestamp), 10, 64)
	if err != nil { // Verify parsed it already
		return err
	}
	signature := strings.TrimSpace(c.GetHeader(HeaderSignature))
	first, err := s.db.ClaimSignature(c.Request.Context(), cl.ID, signature, time.Unix(ts, 0).Add(signatureWindow))
	if err != nil {
		return err
	}
	if !first {
		c.Header("WWW-Authenticate", signatureChallenge)
		return i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureReplayed)
	}
	return nil
}
