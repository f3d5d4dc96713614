package callbacks

import (
	"time"

	"pvebill/i18n"
	"pvebill/models"
)

// Event is the JSON body of a callback: the operation as the API shows it and its service.
type Event struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt time.Time      `json:"created_at"`
	Operation EventOperation `json:"operation"`
	Service   EventService   `json:"service"`
}

// EventOperation is the API's operation object (docs/api.md Objects) at the moment it ended.
type EventOperation struct {
	ID         string      `json:"id"`
	ServiceID  string      `json:"service_id"`
	Action     string      `json:"action"`
	State      string      `json:"state"`
	Stage      string      `json:"stage"`
	Error      *EventError `json:"error,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	FinishedAt *time.Time  `json:"finished_at,omitempty"`
}

// EventError is an operation's error: the stable code, its English detail and the blockers the
// run found (R25), as the operation's error shows them.
type EventError struct {
	Code     string         `json:"code"`
	Detail   string         `json:"detail"`
	Blockers []EventBlocker `json:"blockers,omitempty"`
}

// EventBlocker is one blocker of a failed operation and its English phrase.
type EventBlocker struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// EventService names the service and its state when the event was written ("" when the
// service row does not exist).
type EventService struct {
	ServiceID string `json:"service_id"`
	State     string `json:"state,omitempty"`
}

func operationOf(op *models.Operation) EventOperation {
	v := EventOperation{ID: op.ID, ServiceID: op.ServiceID, Action: op.Action, State: op.State, Stage: op.Stage,
		CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC()}
	if op.FinishedAt != nil {
		t := op.FinishedAt.UTC()
		v.FinishedAt = &t
	}
	if op.ErrorCode != nil {
		v.Error = &EventError{Code: *op.ErrorCode}
		if op.ErrorDetail != nil {
			v.Error.Detail = *op.ErrorDetail
		}
		for _, b := range op.Blockers() {
			msg := i18n.Blocker{Code: b.Code, Params: b.Params}.Message("en")
			v.Error.Blockers = append(v.Error.Blockers, EventBlocker{Code: b.Code, Message: msg})
		}
	}
	return v
}
