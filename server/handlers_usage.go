package server

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/usage"
	"pvebill/server/config"
)

// usageParams are the query parameters GET /v1/usage accepts; anything else is refused, so a
// misspelt parameter is never silently ignored.
var usageParams = map[string]bool{"from": true, "to": true, "service_id": true, "granularity": true,
	"limit": true, "cursor": true, "wait": true, clientParam: true}

// getUsage answers GET /v1/usage (R34, R45, docs/api.md Usage): per service and period, from
// the coarsest usage tiers covering it, null where a value is not known. A billing client sees its own services,
// an admin every service.
func (s *Server) getUsage(c *gin.Context) error {
	q, err := usageQuery(c)
	if err != nil {
		return err
	}
	if q.ServiceID == "" && client(c).HasScope(config.ScopeAdmin) {
		// An admin's report of every client's services, or of the one ?client= names.
		q.ClientID = c.Query(clientParam)
	} else {
		// A billing client's own services; an admin's one service id is resolved as on the
		// service routes, so a shared id needs ?client= (R46).
		q.ClientID, err = s.serviceClient(c, q.ServiceID)
		if err != nil {
			return err
		}
	}
	ctx := c.Request.Context()
	if q.ServiceID != "" {
		_, err := s.db.GetClientService(ctx, q.ClientID, q.ServiceID)
		if errors.Is(err, models.ErrNotFound) {
			return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
		}
		if err != nil {
			return err
		}
	}
	rep, err := usage.NewReporter(s.db, s.plans, s.now).Report(ctx, q)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, rep)
	return nil
}

// unknownUsageParams lists the query parameters GET /v1/usage does not take.
func unknownUsageParams(c *gin.Context) []i18n.FieldError {
	var fields []i18n.FieldError
	for _, k := range slices.Sorted(maps.Keys(c.Request.URL.Query())) {
		if !usageParams[k] {
			fields = append(fields, i18n.FieldError{Field: k, Code: i18n.FieldUnknown})
		}
	}
	return fields
}

func usageQuery(c *gin.Context) (usage.Query, error) {
	var q usage.Query
	fields := unknownUsageParams(c)
	parseTime := func(name string) time.Time {
		raw, ok := c.GetQuery(name)
		if !ok || raw == "" {
			fields = append(fields, i18n.FieldError{Field: name, Code: i18n.FieldRequired})
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			fields = append(fields, i18n.FieldError{Field: name, Code: i18n.FieldBadTimestamp})
		}
		return t
	}
	q.From, q.To = parseTime("from"), parseTime("to")
	if id, ok := c.GetQuery("service_id"); ok {
		if !serviceIDPattern.MatchString(id) {
			fields = append(fields, i18n.FieldError{Field: "service_id", Code: i18n.FieldPattern})
		}
		q.ServiceID = id
	}
	if g, ok := c.GetQuery("granularity"); ok {
		q.Granularity = models.Tier(g)
		if !q.Granularity.Valid() {
			fields = append(fields, i18n.FieldError{Field: "granularity", Code: i18n.FieldOneOf, Param: "5m, 1h, 1d"})
		}
	}
	if n, fe, ok := pageLimit(c, usage.MaxPageSize); ok {
		q.Limit = n
		fields = append(fields, fe...)
	}
	if named, ok := c.GetQuery(clientParam); ok && !serviceIDPattern.MatchString(named) {
		// A client id has the service id's shape (config.IDPattern).
		fields = append(fields, i18n.FieldError{Field: clientParam, Code: i18n.FieldPattern})
	}
	if cur, ok := c.GetQuery("cursor"); ok {
		if !validCursor(cur) {
			fields = append(fields, i18n.FieldError{Field: "cursor", Code: i18n.FieldPattern})
		}
		q.After = cur
	}
	if len(fields) == 0 {
		switch {
		case errors.Is(q.Check(), usage.ErrPeriod):
			fields = append(fields, i18n.FieldError{Field: "to", Code: i18n.FieldInvalid})
		case errors.Is(q.Check(), usage.ErrLimit):
			fields = append(fields, i18n.FieldError{Field: "limit", Code: i18n.FieldTooLarge, Param: strconv.Itoa(usage.MaxBucketPageSize)})
		}
	}
	if len(fields) > 0 {
		return q, i18n.Validation(fields...)
	}
	return q, nil
}

// seriesParams are the query parameters GET /v1/services/{id}/usage/series accepts.
var seriesParams = map[string]bool{"metric": true, "from": true, "to": true, "points": true, clientParam: true}

// getUsageSeries answers GET /v1/services/{service_id}/usage/series (R45, docs/api.md Usage): one
// metric of one service over a period for a graph, at most `points` points from the coarsest
// usage tier that still gives that many, null where a value is not known.
func (s *Server) getUsageSeries(c *gin.Context) error {
	q, err := seriesQuery(c)
	if err != nil {
		return err
	}
	owner, err := s.serviceClient(c, q.ServiceID)
	if err != nil {
		return err
	}
	svc, err := s.db.GetClientService(c.Request.Context(), owner, q.ServiceID)
	if errors.Is(err, models.ErrNotFound) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return err
	}
	q.Svc = svc.ID
	series, err := usage.NewReporter(s.db, s.plans, s.now).Series(c.Request.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(c, http.StatusOK, gin.H{"series": series})
	return nil
}

// pointsQuery is ?points=N of a usage series: 1 to usage.MaxSeriesPoints (a test holds the two
// equal).
type pointsQuery struct {
	Points *int `json:"points" validate:"omitnil,min=1,max=1000"`
}

func seriesQuery(c *gin.Context) (usage.SeriesQuery, error) {
	q := usage.SeriesQuery{ServiceID: c.Param("service_id"), Metric: c.Query("metric")}
	var fields []i18n.FieldError
	for _, k := range slices.Sorted(maps.Keys(c.Request.URL.Query())) {
		if !seriesParams[k] {
			fields = append(fields, i18n.FieldError{Field: k, Code: i18n.FieldUnknown})
		}
	}
	if !serviceIDPattern.MatchString(q.ServiceID) {
		fields = append(fields, i18n.FieldError{Field: "service_id", Code: i18n.FieldPattern})
	}
	for name, dst := range map[string]*time.Time{"from": &q.From, "to": &q.To} {
		raw := c.Query(name)
		t, err := time.Parse(time.RFC3339Nano, raw)
		switch {
		case raw == "":
			fields = append(fields, i18n.FieldError{Field: name, Code: i18n.FieldRequired})
		case err != nil:
			fields = append(fields, i18n.FieldError{Field: name, Code: i18n.FieldBadTimestamp})
		}
		*dst = t
	}
	var pq pointsQuery
	fields = append(fields, bindQuery(c, &pq)...)
	if pq.Points != nil {
		q.Points = *pq.Points
	}
	if len(fields) == 0 {
		switch err := q.Check(); {
		case errors.Is(err, usage.ErrMetric):
			fields = append(fields, i18n.FieldError{Field: "metric", Code: i18n.FieldOneOf,
				Param: "swap, memory, cpu, netin, netout, disk"})
		case errors.Is(err, usage.ErrPeriod):
			fields = append(fields, i18n.FieldError{Field: "to", Code: i18n.FieldInvalid})
		}
	}
	if len(fields) > 0 {
		slices.SortFunc(fields, func(a, b i18n.FieldError) int { return strings.Compare(a.Field, b.Field) })
		return q, i18n.Validation(fields...)
	}
	return q, nil
}

// validCursor reports whether cur is a usage page cursor: a service id and a client id joined
// by usage.FormatCursor, or a service id alone (a cursor from before service ids were per
// client, R46).
func validCursor(cur string) bool {
	sid, cid, twoPart := usage.SplitCursor(cur)
	return serviceIDPattern.MatchString(sid) && (!twoPart || serviceIDPattern.MatchString(cid))
}
