package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"pvebill/i18n"
)

func routeNotFound() *i18n.Problem {
	return i18n.NewProblem(http.StatusNotFound, i18n.CodeRouteNotFound)
}
func methodNotAllowed() *i18n.Problem {
	return i18n.NewProblem(http.StatusMethodNotAllowed, i18n.CodeMethodNotAllowed)
}

func (s *Server) healthz(c *gin.Context) error {
	writeJSON(c, http.StatusOK, gin.H{"status": "ok"})
	return nil
}

// readyDBTimeout bounds /readyz's own database ping and schema check: a healthy pool answers
// in about a millisecond, and a database that hangs still gets an answer (503) well inside a
// one-second probe.
const readyDBTimeout = 500 * time.Millisecond

// readyz checks the database itself (a ping and the schema, within readyDBTimeout: without the
// database pvebill can do nothing, so that is checked live) and answers 503 while draining. The
// clusters are reported as the background check last found them, with its age: /readyz never
// calls Proxmox (R50).
func (s *Server) readyz(c *gin.Context) error {
	checks := gin.H{}
	ready := true
	select {
	case <-s.draining:
		ready = false
		checks["draining"] = true
	default:
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), readyDBTimeout)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		ready = false
		checks["database"] = "unreachable"
		s.log.Warn("readiness: database unreachable", "err", err)
	} else {
		checks["database"] = "ok"
	}
	if nodes := s.db.Nodes(); nodes != nil {
		checks["database_nodes"] = nodes // which node this replica uses (R51)
	}
	if err := s.checkSchema(ctx); err != nil {
		ready = false
		checks["schema"] = "behind"
	} else if checks["database"] == "ok" {
		checks["schema"] = "ok"
	}
	// Cluster reachability and the datacenter firewall are reported, never a reason to be
	// unready (R9), from the last background check (R50).
	clusters := s.ready.Readiness(ctx)
	s.listAgents(clusters)
	checks["clusters"] = clusters
	if len(s.transport) > 0 {
		// Reported, never a reason to be unready: the operator chose the setting.
		checks["insecure_transport"] = s.transport
	}
	status, word := http.StatusOK, "ready"
	if !ready {
		status, word = http.StatusServiceUnavailable, "not_ready"
	}
	writeJSON(c, status, gin.H{"status": word, "checks": checks})
	return nil
}

// listAgents adds each agent cluster's connected agents to its entry (R57): an empty list says
// the cluster is unavailable until its agent is back.
func (s *Server) listAgents(clusters map[string]any) {
	if s.agents == nil {
		return
	}
	for _, name := range s.agents.Clusters() {
		entry, ok := clusters[name].(map[string]any)
		if !ok {
			continue
		}
		entry["agents"] = s.agents.Agents(name)
	}
}

// checkSchema is the database's CheckSchema until it first succeeds, then nil: the check reads
// the migrations table (and on SQLite takes the write lock to create it if missing), which a
// probe every second should not repeat once the answer cannot change.
func (s *Server) checkSchema(ctx context.Context) error {
	if s.schemaOK.Load() {
		return nil
	}
	if err := s.db.CheckSchema(ctx); err != nil {
		return err
	}
	s.schemaOK.Store(true)
	return nil
}

func (s *Server) metricsHandler() handlerFunc {
	h := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})
	token := s.cfg.Metrics.BearerToken
	return func(c *gin.Context) error {
		if token != "" {
			got := c.GetHeader("Authorization")
			if subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+token)) != 1 {
				c.Header("WWW-Authenticate", `Bearer realm="pvebill-metrics"`)
				return i18n.NewProblem(http.StatusUnauthorized, i18n.CodeSignatureInvalid)
			}
		}
		h.ServeHTTP(c.Writer, c.Request)
		return nil
	}
}

func (s *Server) openAPI(c *gin.Context) error {
	c.Data(http.StatusOK, "application/yaml", s.openapi)
	return nil
}
