package server

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/server/config"
)

// clientParam is the query parameter that names the client of a service an admin reads
// (docs/api.md "Service ids are per client").
const clientParam = "client"

// serviceClient is the client whose service serviceID the request addresses (R46). A service
// id is unique per client only, so a billing client always addresses its own services: naming
// another client answers exactly as a service that does not exist. An admin addresses any
// client's service: the one ?client= names; without it its own service of that id if it has
// one, else the one client's that has it; when several other clients have the id, 409
// service_ambiguous asks for ?client=.
func (s *Server) serviceClient(c *gin.Context, serviceID string) (string, error) {
	cl := client(c)
	named, ok := c.GetQuery(clientParam)
	if ok && !serviceIDPattern.MatchString(named) {
		return "", i18n.Validation(i18n.FieldError{Field: clientParam, Code: i18n.FieldPattern})
	}
	if !cl.HasScope(config.ScopeAdmin) {
		if ok && named != cl.ID {
			return "", i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
		}
		return cl.ID, nil
	}
	if ok {
		return named, nil
	}
	owners, err := s.db.ServiceOwners(c.Request.Context(), serviceID)
	switch {
	case err != nil:
		return "", err
	case len(owners) == 0 || slices.Contains(owners, cl.ID):
		return cl.ID, nil
	case len(owners) == 1:
		return owners[0], nil
	}
	return "", i18n.NewProblem(http.StatusConflict, i18n.CodeServiceAmbiguous).Perm(i18n.Permanent)
}
