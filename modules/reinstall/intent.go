package reinstall

import (
	"encoding/json"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
)

// Preview is what phase 1 read and judged: the document stored on the preview operation's
// result and on the intent, exactly what the customer is shown.
type Preview struct {
	// Rootfs and Mounts are a container's (R19–R21).
	Rootfs *RootfsSizes `json:"rootfs,omitempty"`
	Mounts []Mount      `json:"mounts"`
	// BootDisk, Disks and RootKey (the boot disk's key) are a VM's (R30); a VM has no rootfs.
	BootDisk *RootfsSizes `json:"boot_disk,omitempty"`
	Disks    []Mount      `json:"disks,omitzero"`
	RootKey  string       `json:"root_key,omitempty"`
	// NoRoot is set when the guest has no mount whose size may only grow (a VM without a boot
	// disk): nothing can shrink and nothing is missing (R24, R25).
	NoRoot        bool           `json:"no_root,omitempty"`
	Confirmations []Confirmation `json:"confirmations"`
	Blockers      []Blocker      `json:"blockers"`
	// Snapshots are the guest's snapshots, which the replacement erases (R44); each is also
	// a confirmation.
	Snapshots []Snapshot `json:"snapshots"`
}

// labelled returns what the preview labelled: a container's mounts or a VM's disks.
func (p Preview) labelled() []Mount {
	if p.Disks != nil {
		return p.Disks
	}
	return p.Mounts
}

// Applied is what apply carried back, stored on the apply operation's payload and on the intent
// for audit: the confirmations and, beside them, the labels the customer saw.
type Applied struct {
	Confirmations []Confirmation `json:"confirmations"`
	Mounts        []Mount        `json:"mounts"`
	Disks         []Mount        `json:"disks,omitempty"`
}

// Reconciliation is what a reinstall that failed at or after destroy leaves for an operator
// (R28). GuestExisted is nil when it could not be determined: null is not false.
type Reconciliation struct {
	VMID         int    `json:"vmid"`
	FailedStage  string `json:"failed_stage"`
	GuestExisted *bool  `json:"guest_existed"`
	// Facts and Reason are what the facts showed and why they did not suffice (R58).
	Facts  *executor.Facts `json:"facts,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// runResult is what an apply operation records when it ends.
type runResult struct {
	VMID         int    `json:"vmid"`
	Node         string `json:"node,omitempty"`
	FailedStage  string `json:"failed_stage,omitempty"`
	GuestExisted *bool  `json:"guest_existed"`
	// Blockers are the blockers the run's own check found.
	Blockers []Blocker `json:"blockers,omitempty"`
	// Checked is set once the guest-existence check ran (GuestExisted may still be nil).
	Checked bool `json:"existence_checked,omitempty"`
}

// transition is one move of an intent: the columns to write and, when not empty, the state its
// service takes with it.
type transition struct {
	cols         map[string]any
	serviceState string
}

// next decides the move of an intent from the operation it is attached to; ok is false when
// there is none (the operation has not ended, or the intent is already past it). It is the
// intent's whole state machine:
//
//	preview_pending ─op succeeded─▶ preview_ready ─apply─▶ applying ─op succeeded─▶ completed
//	       └─op failed─▶ failed                               ├─op failed─▶ failed
//	                                                          └─op needs_reconciliation─▶
//	                                                              needs_reconciliation ─reconcile─▶ resolved
func next(in *models.Intent, op *models.Operation) (transition, bool) {
	if op == nil || op.ID != in.OperationID {
		return transition{}, false
	}
	if !models.IsTerminal(op.State) {
		return awaiting(in, op)
	}
	switch in.State {
	case models.IntentPreviewPending:
		if op.State == models.OpSucceeded && op.Result != nil {
			return transition{cols: map[string]any{"state": models.IntentPreviewReady, "preview": *op.Result}}, true
		}
		return transition{cols: failedCols(op, models.IntentFailed)}, true
	case models.IntentApplying, models.IntentAwaitingPassword:
		switch op.State {
		case models.OpSucceeded:
			return transition{cols: map[string]any{"state": models.IntentCompleted}}, true
		case models.OpFailed:
			return transition{cols: failedCols(op, models.IntentFailed)}, true
		case models.OpNeedsReconciliation:
			rec := Reconciliation{VMID: in.VMID, FailedStage: op.Stage}
			var res runResult
			if op.Result != nil && json.Unmarshal([]byte(*op.Result), &res) == nil && res.Checked {
				rec.GuestExisted = res.GuestExisted
			}
			var found executor.Reconciliation
			if op.Reconciliation != nil && json.Unmarshal([]byte(*op.Reconciliation), &found) == nil {
				rec.Facts, rec.Reason = &found.Facts, found.Reason
			}
			raw, _ := json.Marshal(rec)
			cols := failedCols(op, models.IntentNeedsReconciliation)
			cols["reconciliation"] = string(raw)
			return transition{cols: cols, serviceState: models.ServiceNeedsReconciliation}, true
		}
	}
	return transition{}, false
}

// awaiting moves an applying intent to awaiting_password while its operation is parked for the
// password (R58), and back to applying once the password came.
func awaiting(in *models.Intent, op *models.Operation) (transition, bool) {
	parked := op.State == models.OpQueued && op.Awaiting != nil && *op.Awaiting == models.AwaitingPassword
	switch {
	case in.State == models.IntentApplying && parked:
		return transition{cols: map[string]any{"state": models.IntentAwaitingPassword}}, true
	case in.State == models.IntentAwaitingPassword && !parked:
		return transition{cols: map[string]any{"state": models.IntentApplying}}, true
	}
	return transition{}, false
}

// failedCols are the columns of an intent that ends in state with its operation's error: the
// code and the blockers the run found (R25).
func failedCols(op *models.Operation, state string) map[string]any {
	return map[string]any{"state": state, "error_code": errorCode(op), "error_blockers": op.ErrorBlockers}
}

func errorCode(op *models.Operation) *string {
	if op.ErrorCode != nil {
		c := *op.ErrorCode
		return &c
	}
	c := string(i18n.CodeInternal)
	return &c
}

// View is an intent as the API shows it (docs/api.md Reinstall, the intent envelope).
type View struct {
	ID             string          `json:"id"`
	ServiceID      string          `json:"service_id"`
	Kind           string          `json:"kind"`
	BackupID       string          `json:"backup_id,omitempty"`
	State          string          `json:"state"`
	Generation     int64           `json:"generation"`
	GuestType      string          `json:"guest_type"`
	VMID           int             `json:"vmid"`
	OS             string          `json:"os,omitempty"`
	OperationID    string          `json:"operation_id"`
	Rootfs         *RootfsSizes    `json:"rootfs,omitempty"`
	Mounts         []Mount         `json:"mounts"`
	BootDisk       *RootfsSizes    `json:"boot_disk,omitempty"`
	Disks          []Mount         `json:"disks,omitzero"`
	Confirmations  []Confirmation  `json:"confirmations"`
	Snapshots      []Snapshot      `json:"snapshots"`
	Blockers       []BlockerView   `json:"blockers"`
	Applied        *Applied        `json:"applied,omitempty"`
	Reconciliation *Reconciliation `json:"reconciliation,omitempty"`
	Error          *ErrorView      `json:"error,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// BlockerView is a blocker with its phrase in the request's language.
type BlockerView struct {
	Code    BlockerCode       `json:"code"`
	Message string            `json:"message"`
	Params  map[string]string `json:"params,omitempty"`
}

// ErrorView is the code and translated detail of a failed intent and the blockers its
// operation's run found.
type ErrorView struct {
	Code     string        `json:"code"`
	Detail   string        `json:"detail"`
	Blockers []BlockerView `json:"blockers,omitempty"`
}

// ViewOf renders an intent in lang.
func ViewOf(in *models.Intent, lang string) View {
	v := View{ID: in.ID, ServiceID: in.ServiceID, Kind: in.Kind, State: in.State, Generation: in.Generation, GuestType: in.GuestType,
		VMID: in.VMID, OS: in.OS, OperationID: in.OperationID, Mounts: []Mount{}, Confirmations: []Confirmation{},
		Snapshots: []Snapshot{}, Blockers: []BlockerView{}, CreatedAt: in.CreatedAt.UTC(), UpdatedAt: in.UpdatedAt.UTC()}
	if in.BackupID != nil {
		v.BackupID = *in.BackupID
	}
	if in.Preview != nil {
		var p Preview
		if json.Unmarshal([]byte(*in.Preview), &p) == nil {
			v.Rootfs, v.BootDisk, v.Disks = p.Rootfs, p.BootDisk, p.Disks
			if v.BootDisk != nil && v.Disks == nil {
				// A VM's preview lists its disks even when it has none (an older stored
				// preview dropped an empty list).
				v.Disks = []Mount{}
			}
			if p.Mounts != nil {
				v.Mounts = p.Mounts
			}
			if p.Confirmations != nil {
				v.Confirmations = p.Confirmations
			}
			if p.Snapshots != nil {
				v.Snapshots = p.Snapshots
			}
			for _, b := range p.Blockers {
				v.Blockers = append(v.Blockers, BlockerView{Code: b.Code, Message: b.Message(lang), Params: b.Params})
			}
		}
	}
	if in.Applied != nil {
		var a Applied
		if json.Unmarshal([]byte(*in.Applied), &a) == nil {
			v.Applied = &a
		}
	}
	if in.Reconciliation != nil {
		var r Reconciliation
		if json.Unmarshal([]byte(*in.Reconciliation), &r) == nil {
			v.Reconciliation = &r
		}
	}
	if in.ErrorCode != nil {
		p := i18n.NewProblem(0, i18n.Code(*in.ErrorCode))
		v.Error = &ErrorView{Code: *in.ErrorCode, Detail: p.Detail(lang)}
		for _, sb := range in.Blockers() {
			b := Blocker{Code: BlockerCode(sb.Code), Params: sb.Params}
			v.Error.Blockers = append(v.Error.Blockers, BlockerView{Code: b.Code, Message: b.Message(lang), Params: b.Params})
		}
	}
	return v
}
