package models

import (
	"context"
	"encoding/json"
)

// StoredBlocker is one blocker an operation's run found (R25), as the error_blockers column
// keeps it: the code and the parameters of its phrase. The phrase itself is not stored; views
// translate it.
type StoredBlocker struct {
	Code   string            `json:"code"`
	Params map[string]string `json:"params,omitempty"`
}

// Outcome is how an operation ends: its terminal state, the result it recorded and, on failure,
// the error code, its English detail and the blockers behind it (nil when none).
type Outcome struct {
	State         string
	Result        *string
	ErrorCode     *string
	ErrorDetail   *string
	ErrorBlockers []StoredBlocker
	// ErrorPermanence and ErrorReason: see Operation.
	ErrorPermanence *string
	ErrorReason     *string
	// Reconciliation is the JSON {facts, reason} of a needs_reconciliation (R58), nil otherwise.
	Reconciliation *string
}

// EncodeBlockers is the column value of bs: nil when there are none.
func EncodeBlockers(bs []StoredBlocker) (*string, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(bs)
	if err != nil {
		return nil, err
	}
	s := string(raw)
	return &s, nil
}

// DecodeBlockers reads an error_blockers column: the blockers in the order the run found them;
// nil when there are none or the column does not hold a JSON array.
func DecodeBlockers(raw *string) []StoredBlocker {
	if raw == nil || *raw == "" {
		return nil
	}
	var bs []StoredBlocker
	if json.Unmarshal([]byte(*raw), &bs) != nil {
		return nil
	}
	return bs
}

// Blockers are the blockers stored on the operation's error (DecodeBlockers).
func (op *Operation) Blockers() []StoredBlocker { return DecodeBlockers(op.ErrorBlockers) }

// Blockers are the blockers stored on the intent's error (DecodeBlockers).
func (in *Intent) Blockers() []StoredBlocker { return DecodeBlockers(in.ErrorBlockers) }

// FinishOutcome is Finish with the whole outcome, blockers included.
func (db *DB) FinishOutcome(ctx context.Context, id, owner string, out Outcome) error {
	blockers, err := EncodeBlockers(out.ErrorBlockers)
	if err != nil {
		return err
	}
	return db.finish(ctx, id, owner, out.State, map[string]any{"result": out.Result, "error_code": out.ErrorCode,
		"error_detail": out.ErrorDetail, "error_blockers": blockers, "error_permanence": out.ErrorPermanence,
		"error_reason": out.ErrorReason, "reconciliation": out.Reconciliation})
}
