package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// listGuests is GET /v1/admin/guests: every guest of every cluster, its guest_type read from
// Proxmox's type (R3), with the managing service_id when there is one.
func (s *Server) listGuests(c *gin.Context) {
	guests, err := s.prov.Guests(c.Request.Context())
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	writeJSON(c, http.StatusOK, gin.H{"guests": guests})
}
