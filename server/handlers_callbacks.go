package server

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/callbacks"
)

// CallbackView is the API shape of one callback delivery (GET /v1/admin/callbacks).
type CallbackView struct {
	ID             string                `json:"id"`
	ClientID       string                `json:"client_id"`
	OperationID    string                `json:"operation_id"`
	OperationState string                `json:"operation_state"`
	ServiceID      string                `json:"service_id"`
	State          string                `json:"state"`
	Attempts       int                   `json:"attempts"`
	NextAttemptAt  *time.Time            `json:"next_attempt_at"`
	DeliveredAt    *time.Time            `json:"delivered_at"`
	LastStatus     *int                  `json:"last_status"`
	LastError      *string               `json:"last_error"`
	CreatedAt      time.Time             `json:"created_at"`
	UpdatedAt      time.Time             `json:"updated_at"`
	AttemptLog     []CallbackAttemptView `json:"attempt_log"`
}

// CallbackAttemptView is one POST of a delivery.
type CallbackAttemptView struct {
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	URL        string    `json:"url"`
	Status     *int      `json:"status"`
	Error      *string   `json:"error"`
	DurationMS int64     `json:"duration_ms"`
}

func callbackView(d models.CallbackDelivery) CallbackView {
	v := CallbackView{ID: d.ID, ClientID: d.ClientID, OperationID: d.OperationID, OperationState: d.OperationState,
		ServiceID: d.ServiceID, State: d.State, Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), AttemptLog: []CallbackAttemptView{}}
	if d.State == models.CallbackPending {
		t := d.NextAttemptAt.UTC()
		v.NextAttemptAt = &t
	}
	if d.DeliveredAt != nil {
		t := d.DeliveredAt.UTC()
		v.DeliveredAt = &t
	}
	for _, a := range d.AttemptLog {
		// Stored redacted; redacted again for rows written before that was so (R48).
		v.AttemptLog = append(v.AttemptLog, CallbackAttemptView{Attempt: a.Attempt, At: a.At.UTC(), URL: callbacks.RedactURL(a.URL),
			Status: a.Status, Error: a.Error, DurationMS: a.DurationMS})
	}
	return v
}

// listCallbacks is GET /v1/admin/callbacks: completion callback deliveries, newest first, with
// their attempts; filters client_id, state, service_id, operation_id and limit (1–500).
func (s *Server) listCallbacks(c *gin.Context) error {
	f := models.CallbackFilter{ClientID: c.Query("client_id"), State: c.Query("state"),
		ServiceID: c.Query("service_id"), OperationID: c.Query("operation_id")}
	switch f.State {
	case "", models.CallbackPending, models.CallbackDelivered, models.CallbackExpired:
	default:
		return i18n.Validation(i18n.FieldError{Field: "state", Code: i18n.FieldOneOf,
			Param: models.CallbackPending + ", " + models.CallbackDelivered + ", " + models.CallbackExpired})
	}
	if n, fe, ok := pageLimit(c, 500); len(fe) > 0 {
		return i18n.Validation(fe...)
	} else if ok {
		f.Limit = n
	}
	list, err := s.db.ListCallbackDeliveries(c.Request.Context(), f)
	if err != nil {
		return err
	}
	out := make([]CallbackView, 0, len(list))
	for _, d := range list {
		out = append(out, callbackView(d))
	}
	writeJSON(c, http.StatusOK, gin.H{"callbacks": out})
	return nil
}
