package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
)

// problemBody is the application/problem+json document (docs/api.md Conventions).
type problemBody struct {
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Status     int            `json:"status"`
	Code       string         `json:"code"`
	Detail     string         `json:"detail"`
	Permanence string         `json:"permanence,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Blockers   []blockerBody  `json:"blockers,omitempty"`
	Errors     []fieldErrBody `json:"errors,omitempty"`
	RequestID  string         `json:"request_id,omitempty"`
}

type blockerBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type fieldErrBody struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

const problemTypeBase = "https://pvebill.dev/problems/"

// lang returns the negotiated language of the request.
func lang(c *gin.Context) string {
	st := state(c)
	if !st.hasLang {
		st.lang, st.hasLang = i18n.Negotiate(c.GetHeader("Accept-Language")), true
	}
	return st.lang
}

// writeError is the one place any error becomes an HTTP answer. Problems map to their status;
// anything else is logged and answered as a 500 with the request id.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var p *i18n.Problem
	if !errors.As(err, &p) {
		log.Error("unhandled error", "request_id", requestID(c), "route", c.FullPath(), "err", err)
		p = i18n.NewProblem(http.StatusInternalServerError, i18n.CodeInternal)
	} else if p.Status >= 500 {
		log.Error("request failed", "request_id", requestID(c), "route", c.FullPath(), "code", string(p.Code), "err", p.Error())
	}
	writeProblem(c, p)
}

func writeProblem(c *gin.Context, p *i18n.Problem) {
	l := lang(c)
	body := problemBody{
		Type:       problemTypeBase + string(p.Code),
		Title:      http.StatusText(p.Status),
		Status:     p.Status,
		Code:       string(p.Code),
		Detail:     p.Detail(l),
		Permanence: string(p.Permanence),
		Reason:     p.ReasonMessage(l),
		RequestID:  requestID(c),
	}
	for _, b := range p.Blockers {
		body.Blockers = append(body.Blockers, blockerBody{Code: b.Code, Message: b.Message(l)})
	}
	for _, f := range p.Fields {
		body.Errors = append(body.Errors, fieldErrBody{Field: f.Field, Code: string(f.Code), Message: f.Message(l)})
	}
	raw, _ := json.Marshal(body)
	c.Header("Content-Language", l)
	c.Data(p.Status, "application/problem+json", raw)
	c.Abort()
}

// writeJSON answers with a JSON document and the negotiated Content-Language.
func writeJSON(c *gin.Context, status int, v any) {
	c.Header("Content-Language", lang(c))
	c.JSON(status, v)
}

// handlerFunc is a route's handler in the shape the whole table shares: it writes its answer,
// or returns the error that h turns into problem+json (and nothing else writes an error).
type handlerFunc func(c *gin.Context) error

// h adapts a handlerFunc to gin: the one place a route's error becomes an answer.
func (s *Server) h(f handlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := f(c); err != nil {
			writeError(c, s.log, err)
		}
	}
}
