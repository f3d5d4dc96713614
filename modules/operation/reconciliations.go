package operation

import (
	"context"
	"encoding/json"
	"time"

	"pvebill/models"
	"pvebill/modules/executor"
)

// OpenReconciliation is one entry of GET /v1/admin/reconciliations: an operation an operator
// must look at (R28, R58), the facts its run found, why they did not suffice, and the
// resolution they suggest for POST /v1/admin/services/{id}/reconcile.
type OpenReconciliation struct {
	ServiceID   string          `json:"service_id"`
	Client      string          `json:"client"`
	OperationID string          `json:"operation_id"`
	Action      string          `json:"action"`
	FailedStage string          `json:"failed_stage"`
	Facts       executor.Facts  `json:"facts"`
	Reason      string          `json:"reason"`
	Since       time.Time       `json:"since"`
	Suggested   *SuggestedFixup `json:"suggested_resolution"`
}

// SuggestedFixup is a suggested resolution: one of the reconcile resolutions, and what to
// check before sending it.
type SuggestedFixup struct {
	Resolution string `json:"resolution"`
	Check      string `json:"check"`
}

// ReasonNotRecorded is the reason of a needs_reconciliation whose run recorded no facts (one
// from before R58).
const ReasonNotRecorded = "facts_not_recorded"

// Reconciliations lists the open reconciliations, oldest first (at most limit).
func Reconciliations(ctx context.Context, db *models.DB, limit int) ([]OpenReconciliation, error) {
	ops, err := db.OpenReconciliations(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]OpenReconciliation, 0, len(ops))
	for _, op := range ops {
		r := OpenReconciliation{ServiceID: op.ServiceID, Client: op.ClientID, OperationID: op.ID, Action: op.Action,
			FailedStage: op.Stage, Reason: ReasonNotRecorded, Since: op.UpdatedAt.UTC()}
		if op.FinishedAt != nil {
			r.Since = op.FinishedAt.UTC()
		}
		var rec executor.Reconciliation
		if op.Reconciliation != nil && json.Unmarshal([]byte(*op.Reconciliation), &rec) == nil {
			r.Facts, r.Reason = rec.Facts, rec.Reason
		}
		r.Suggested = suggest(op.Action, r.Facts, r.Reason)
		out = append(out, r)
	}
	return out, nil
}

// suggest is the resolution the facts point to; nil when an operator must look first (no
// facts, or a guest on the vmid that is not the service's).
func suggest(action string, f executor.Facts, reason string) *SuggestedFixup {
	switch {
	case reason == executor.ReasonNotOurs:
		return nil
	case f.GuestPresent == nil:
		return nil
	case !*f.GuestPresent && action == "terminate":
		return &SuggestedFixup{Resolution: "abandoned", Check: "the guest is gone: the terminate only has its addresses and backups left; the billing system terminates again"}
	case !*f.GuestPresent:
		return &SuggestedFixup{Resolution: "abandoned", Check: "no guest is on the vmid: the billing system creates the service again or terminates it"}
	case f.Stamped != nil && *f.Stamped && action == "restore":
		return &SuggestedFixup{Resolution: "restored", Check: "the guest carries the service's stamp: check that it starts with the restored data"}
	case f.Stamped != nil && *f.Stamped:
		return &SuggestedFixup{Resolution: "recreated", Check: "the guest carries the service's stamp: check its config and that it starts"}
	}
	return nil
}
