package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/server/config"
)

// OperationView is the API shape of an operation (docs/api.md Objects).
type OperationView struct {
	ID        string         `json:"id"`
	ServiceID string         `json:"service_id"`
	Action    string         `json:"action"`
	State     string         `json:"state"`
	Stage     string         `json:"stage"`
	Error     *OperationErr  `json:"error,omitempty"`
	Result    map[string]any `json:"result,omitempty"`
	// Resumed counts the runs resumed from the facts (R58); Reconciliation is what a
	// needs_reconciliation found and why it did not suffice.
	Resumed        int                      `json:"resumed"`
	Reconciliation *executor.Reconciliation `json:"reconciliation,omitempty"`
	CreatedAt      time.Time                `json:"created_at"`
	UpdatedAt      time.Time                `json:"updated_at"`
	FinishedAt     *time.Time               `json:"finished_at,omitempty"`
}

// OperationErr is an operation's error: a stable code, its translated detail and, when the run
// was blocked, the blockers it found (R25).
type OperationErr struct {
	Code       string        `json:"code"`
	Detail     string        `json:"detail"`
	Permanence string        `json:"permanence,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	Blockers   []blockerBody `json:"blockers,omitempty"`
}

// operationBody is the {"operation": …} answer; a struct encodes to the same bytes as the
// one-key map without building and sorting the map.
type operationBody struct {
	Operation OperationView `json:"operation"`
}

func operationView(op *models.Operation, lang string) OperationView {
	v := OperationView{ID: op.ID, ServiceID: op.ServiceID, Action: op.Action, State: op.State, Stage: op.Stage,
		Resumed: op.Resumed, CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC()}
	if op.Reconciliation != nil {
		var rec executor.Reconciliation
		if json.Unmarshal([]byte(*op.Reconciliation), &rec) == nil {
			v.Reconciliation = &rec
		}
	}
	if op.FinishedAt != nil {
		t := op.FinishedAt.UTC()
		v.FinishedAt = &t
	}
	if op.ErrorCode != nil {
		v.Error = &OperationErr{Code: *op.ErrorCode, Detail: i18n.T(lang, "error."+*op.ErrorCode, nil)}
		if op.ErrorPermanence != nil {
			v.Error.Permanence = *op.ErrorPermanence
		}
		if op.ErrorReason != nil {
			v.Error.Reason = *op.ErrorReason
		}
		for _, b := range op.Blockers() {
			msg := i18n.Blocker{Code: b.Code, Params: b.Params}.Message(lang)
			v.Error.Blockers = append(v.Error.Blockers, blockerBody{Code: b.Code, Message: msg})
		}
	}
	if op.Result != nil && *op.Result != "" {
		// Results are what the action recorded (vmid, task warnings, a failed task's log tail);
		// they never hold secrets. A result that is not a JSON object is not shown.
		var res map[string]any
		if json.Unmarshal([]byte(*op.Result), &res) == nil {
			v.Result = res
		}
	}
	return v
}

// queryMiddleware validates the query string and ?wait=N before a handler runs, so a bad value
// changes nothing.
func queryMiddleware(c *gin.Context) {
	if p := queryProblem(c.Request.URL.RawQuery); p != nil {
		writeProblem(c, p)
		return
	}
	d, p := parseWait(c)
	if p != nil {
		writeProblem(c, p)
		return
	}
	state(c).wait = d
	c.Next()
}

// queryProblem refuses a query string the standard parser takes only in part, dropping a
// parameter in silence: one holding a ";" (no separator) or a bad %-escape. The field is the
// first such parameter's name, as far as it can be read.
func queryProblem(raw string) *i18n.Problem {
	if raw == "" {
		return nil
	}
	if _, err := url.ParseQuery(raw); err == nil {
		return nil
	}
	name := "(query)"
	for seg := range strings.SplitSeq(raw, "&") {
		if _, err := url.ParseQuery(seg); err == nil {
			continue
		}
		key, _, _ := strings.Cut(seg, "=")
		key, _, _ = strings.Cut(key, ";")
		if k, err := url.QueryUnescape(key); err == nil && k != "" {
			name = k
		} else if key != "" {
			name = key
		}
		break
	}
	return i18n.Validation(i18n.FieldError{Field: name, Code: i18n.FieldPattern})
}

func waitOf(c *gin.Context) time.Duration { return state(c).wait }

// parseWait reads ?wait=N (whole seconds, 0–60).
func parseWait(c *gin.Context) (time.Duration, *i18n.Problem) {
	if c.Request.URL.RawQuery == "" {
		return 0, nil // no query to parse
	}
	var q waitQuery
	if fe := bindQuery(c, &q); len(fe) > 0 {
		return 0, i18n.Validation(fe...)
	}
	if q.Wait == nil {
		return 0, nil
	}
	return time.Duration(*q.Wait) * time.Second, nil
}

// opIDOK is a cheap shape check so that junk ids are a 404 without a query.
func opIDOK(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, r := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f'):
		default:
			return false
		}
	}
	return true
}

func (s *Server) getOperation(c *gin.Context) error {
	wait := waitOf(c)
	id := c.Param("id")
	if !opIDOK(id) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	op, err := s.loadOperation(c, id)
	if err != nil {
		return err
	}
	if wait > 0 && !models.IsTerminal(op.State) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
		defer cancel()
		if op, err = executor.WaitTerminal(ctx, s.db, s.exec.Broker(), id, s.recheck); err != nil {
			return err
		}
	}
	writeJSON(c, http.StatusOK, operationBody{operationView(op, lang(c))})
	return nil
}

// loadOperation reads an operation the client may see: a billing client only its own.
func (s *Server) loadOperation(c *gin.Context, id string) (*models.Operation, error) {
	op, err := s.db.GetOperation(c.Request.Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return nil, err
	}
	cl := client(c)
	if !cl.HasScope(config.ScopeAdmin) && op.ClientID != cl.ID {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	return op, nil
}

// acceptOperation answers a mutation: 202 with the operation and its Location, or — with
// ?wait=N — 200 once it finished within N seconds.
func (s *Server) acceptOperation(c *gin.Context, op *models.Operation) error {
	wait := waitOf(c)
	s.exec.Kick()
	status := http.StatusAccepted
	if wait > 0 {
		ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
		defer cancel()
		latest, err := executor.WaitTerminal(ctx, s.db, s.exec.Broker(), op.ID, s.recheck)
		if err != nil {
			return err
		}
		op = latest
		if models.IsTerminal(op.State) {
			status = http.StatusOK
		}
	}
	c.Header("Location", "/v1/operations/"+op.ID)
	writeJSON(c, status, operationBody{operationView(op, lang(c))})
	return nil
}

// BindJSON strictly decodes and validates a request body, for routes added with V1 outside the
// route table (the benchmark's).
func BindJSON(c *gin.Context, v any) error { return bindJSON(c, v) }
