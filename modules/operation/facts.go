package operation

import (
	"context"
	"errors"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// ReadFacts establishes, for a resolver (R58), how the operation's last recorded Proxmox task
// ended (waiting for it when it still runs) and then where the guest g names is: present or
// not, of which kind, with the service's stamp or not, locked or not. Only GET requests are
// sent. An error is a read that failed (Proxmox unreachable): the caller tries again later.
// The inspection is the kind's own read of the guest (zero when none is present).
func ReadFacts(ctx context.Context, mods *kinds.Registry, cl kinds.Cluster, g kinds.Guest, op *models.Operation) (executor.Facts, kinds.Inspection, error) {
	f := executor.Facts{VMID: g.VMID}
	var in kinds.Inspection
	if op.TaskUPID != nil {
		t, err := lastTask(ctx, cl.Client, *op.TaskUPID)
		if err != nil {
			return f, in, err
		}
		if op.TaskStage != nil {
			t.Stage = *op.TaskStage
		}
		f.LastTask = t
	}
	at, err := mods.Locate(ctx, cl, g.VMID)
	if err != nil {
		return f, in, err
	}
	present, stamped := at.Found, false
	f.GuestPresent, f.Stamped = &present, &stamped
	if !at.Found {
		return f, in, nil
	}
	f.Node, g.Node = at.Node, at.Node
	mod, ok := mods.Get(at.Kind)
	if !ok {
		return f, in, nil
	}
	if in, err = mod.Inspect(ctx, g); err != nil {
		return f, in, err
	}
	if !in.Exists {
		// Gone between the listing and the read.
		present = false
		return f, in, nil
	}
	stamped = in.Stamped && in.Kind == at.Kind
	f.Lock = in.Lock
	return f, in, nil
}

// lastTask reads a task's status, waiting for it to stop when it still runs.
func lastTask(ctx context.Context, c *pve.Client, upid string) (*executor.TaskFacts, error) {
	st, err := c.TaskStatus(ctx, upid)
	if err != nil {
		return nil, err
	}
	if st.Running() {
		if _, err := c.Wait(ctx, upid); err != nil && !errors.Is(err, pve.ErrTaskFailed) {
			return nil, err
		}
		if st, err = c.TaskStatus(ctx, upid); err != nil {
			return nil, err
		}
	}
	return &executor.TaskFacts{UPID: upid, Status: st.Status, ExitStatus: st.ExitStatus}, nil
}

// Ours reports whether the guest the facts found is the service's: it carries the stamp, or it
// is the stub config a destroy the operation recorded in destroyStage leaves while it runs or
// after it failed (lock "destroyed", nothing else: the volumes are gone).
func Ours(f executor.Facts, destroyStage executor.Stage) bool {
	if f.Stamped != nil && *f.Stamped {
		return true
	}
	return f.Lock == "destroyed" && f.LastTask != nil && f.LastTask.Stage == string(destroyStage)
}

// RecordedIn reports whether the last task the operation recorded was started by stage.
func RecordedIn(f executor.Facts, stage executor.Stage) bool {
	return f.LastTask != nil && f.LastTask.Stage == string(stage)
}
