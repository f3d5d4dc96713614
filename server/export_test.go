package server

import (
	"github.com/gin-gonic/gin"

	"pvebill/models"
)

// Names the tests use and production code does not.

// MaxBodyBytes is the request body limit.
const MaxBodyBytes = maxBodyBytes

// Engine exposes the gin engine (tests add test-only routes to it).
func (s *Server) Engine() *gin.Engine { return s.engine }

// ClientID returns the authenticated client's id.
func ClientID(c *gin.Context) string {
	if cl := client(c); cl != nil {
		return cl.ID
	}
	return ""
}

// WriteError maps any error to problem+json.
func (s *Server) WriteError(c *gin.Context, err error) { writeError(c, s.log, err) }

// AcceptOperation answers a mutation with its operation (or its error).
func (s *Server) AcceptOperation(c *gin.Context, op *models.Operation) {
	if err := s.acceptOperation(c, op); err != nil {
		writeError(c, s.log, err)
	}
}
