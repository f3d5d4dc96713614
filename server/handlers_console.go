package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/modules/console"
)

// The customer's console (R41): a signed POST hands out a one-time URL; the page, its assets
// and its WebSocket are public routes whose only credential is the token in the path.

// consolePrefix is where the console's pages are served, consoleAssetsPrefix their assets (a
// path of its own: under /console/ an asset's path would read as a token's).
const (
	consolePrefix       = "/console"
	consoleAssetsPrefix = "/console-assets"
)

// openConsole is POST /v1/services/{id}/console: 201 {"console": {"url", "kind", "expires_at"}}.
// Its answer is never stored for an Idempotency-Key replay (the URL is a credential for 60 s):
// the route's group has no idempotency middleware, and a retry gets a new URL.
func (s *Server) openConsole(c *gin.Context) error {
	var req console.Request
	if err := bindOptional(c, &req); err != nil {
		return err
	}
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	out, err := s.console.Issue(c.Request.Context(), client(c).ID, c.Param("service_id"), req, scheme+"://"+c.Request.Host)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusCreated, gin.H{"console": out})
	return nil
}

// consolePage is GET /console/{token}: the page, or the 410 page of a token that cannot be
// used. Loading it does not use the token.
func (s *Server) consolePage(c *gin.Context) error {
	s.console.ServePage(c.Writer, c.Request, c.Param("token"))
	return nil
}

// consoleSocket is GET /console/{token}/ws: the WebSocket relayed to the guest's console, which
// uses the token.
func (s *Server) consoleSocket(c *gin.Context) error {
	s.console.ServeSocket(c.Writer, c.Request, c.Param("token"))
	return nil
}

// consoleAssets serves the page's embedded scripts, styles and libraries.
var consoleAssets = gin.WrapH(console.Assets(consoleAssetsPrefix + "/"))
