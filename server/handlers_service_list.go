package server

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/modules/provision"
	"pvebill/server/config"
)

// defaultListPage is the page size of GET /v1/services without ?limit=.
const defaultListPage = 100

// listParams are the query parameters GET /v1/services accepts; anything else is refused.
var listParams = map[string]bool{"cursor": true, "limit": true, clientParam: true}

// listServices is GET /v1/services: a page of the calling client's own services (R46), from the
// database alone (docs/api.md). An admin lists the services of the client ?client= names, else
// its own.
func (s *Server) listServices(c *gin.Context) error {
	after, limit, err := listQuery(c)
	if err != nil {
		return err
	}
	owner := client(c).ID
	if named, ok := c.GetQuery(clientParam); ok {
		if !client(c).HasScope(config.ScopeAdmin) && named != owner {
			return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
		}
		owner = named
	}
	page, err := s.prov.List(c.Request.Context(), owner, after, limit)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, page)
	return nil
}

// listQuery reads ?cursor= (the previous page's next_cursor: a service id) and ?limit=
// (1…provision.MaxListPage, default defaultListPage).
func listQuery(c *gin.Context) (after string, limit int, err error) {
	var fields []i18n.FieldError
	for _, k := range slices.Sorted(maps.Keys(c.Request.URL.Query())) {
		if !listParams[k] {
			fields = append(fields, i18n.FieldError{Field: k, Code: i18n.FieldUnknown})
		}
	}
	limit = defaultListPage
	if n, fe, ok := pageLimit(c, provision.MaxListPage); ok {
		limit = n
		fields = append(fields, fe...)
	}
	if cur, ok := c.GetQuery("cursor"); ok {
		if !serviceIDPattern.MatchString(cur) {
			fields = append(fields, i18n.FieldError{Field: "cursor", Code: i18n.FieldPattern})
		}
		after = cur
	}
	if named, ok := c.GetQuery(clientParam); ok && !serviceIDPattern.MatchString(named) {
		fields = append(fields, i18n.FieldError{Field: clientParam, Code: i18n.FieldPattern})
	}
	if len(fields) > 0 {
		return "", 0, i18n.Validation(fields...)
	}
	return after, limit, nil
}

// pageLimit reads ?limit= of a paged list: 1 to most. ok is false when the query has none; fe
// holds the refusal of a value that is not a whole number or out of range.
func pageLimit(c *gin.Context, most int) (n int, fe []i18n.FieldError, ok bool) {
	var q limitQuery
	if fe = bindQuery(c, &q); len(fe) > 0 || q.Limit == nil {
		return 0, fe, len(fe) > 0
	}
	if *q.Limit > most {
		return *q.Limit, []i18n.FieldError{{Field: "limit", Code: i18n.FieldTooLarge, Param: strconv.Itoa(most)}}, true
	}
	return *q.Limit, nil, true
}
