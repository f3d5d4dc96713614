package reinstall

import (
	"context"
	"fmt"
	"strings"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// apply is one run of phase 2: what each stage found, for the stages after it.
type apply struct {
	s   *Replacer
	r   *executor.Run
	p   applyPayload
	in  *models.Intent
	res *runResult
	t   target
	// located is set once the guest was read: from then on a failure can tell whether it
	// still exists.
	located bool
	g       kinds.Guest
	ha      bool
	spec    kinds.CreateSpec
	// archive is a restore's backup volume, looked up again by its precheck.
	archive string
	// adopt is set when a run resumed from the facts configures a guest its create made
	// without finishing (R58): the kind's Configure completes it first.
	adopt bool
}

// applySteps is phase 2 (R22, R26–R30): precheck (the third check, against the config the run
// reads itself, and the confirmations compared pair for pair), stop, a last re-read, destroy
// without destroy-unreferenced-disks (R17), create (the kind's replacement from the plan: a
// container's create, a VM's re-clone with cloud-init), configure, start, verify. A failure
// before destroy is failed and releases the lock; at or after it, needs_reconciliation —
// derived from the stage's position by executor.Action.Destructive alone.
var applySteps = []executor.Step[*apply]{
	{Stage: StagePrecheck, Run: precheck},
	{Stage: StageStop, Run: stopGuest},
	{Stage: StageDestroy, Run: destroyGuest},
	{Stage: StageCreate, Run: recreateGuest},
	{Stage: StageConfigure, Run: reconfigureGuest},
	{Stage: StageStart, Run: startGuest},
	{Stage: StageVerify, Run: verifyGuest},
}

// runApply runs phase 2's stages and records its result (endApply).
func (s *Replacer) runApply(ctx context.Context, r *executor.Run) (err error) {
	a := &apply{s: s, r: r}
	if err := r.Payload(&a.p); err != nil {
		return err
	}
	if a.in, err = s.db.GetIntent(ctx, a.p.IntentID); err != nil {
		return err
	}
	a.res = &runResult{VMID: a.in.VMID}
	defer func() { err = s.endApply(ctx, a, err) }()
	if err := a.prepareResume(ctx); err != nil {
		return err
	}
	if a.in.Kind == models.IntentKindRestore {
		return executor.RunSteps(ctx, r, restoreSteps, a)
	}
	return executor.RunSteps(ctx, r, applySteps, a)
}

// check is the third check: the blockers and the confirmations against what this run reads
// itself.
func (a *apply) check(ctx context.Context) (observation, error) {
	obs, err := a.s.observe(ctx, a.t)
	if err != nil {
		return obs, err
	}
	if bs := Check(obs.facts); len(bs) > 0 {
		return obs, Blocked(bs)
	}
	if !SameConfirmations(ConfirmationsOf(obs.facts), a.p.Confirmations) {
		a.s.log.Warn("config changed since the preview; refusing", "service_id", a.in.ServiceID, "vmid", a.in.VMID)
		return obs, stale()
	}
	return obs, nil
}

func precheck(ctx context.Context, a *apply) error {
	password, _ := a.r.Secret(secretPassword)
	keys, _ := a.r.Secret(secretSSHKeys)
	if password == "" && keys == "" {
		// The secrets lived in the memory of a process that is gone: nothing was touched; ask
		// for the apply again.
		return operation.Interrupted()
	}
	spec := kinds.CreateSpec{OS: a.in.OS, Password: password, SSHKeys: a.p.SSHKeys}
	if keys != "" && len(spec.SSHKeys) == 0 {
		spec.SSHKeys = strings.Split(keys, "\n")
	}
	return a.locate(ctx, spec)
}

// locate reads the intent's target and the guest (the third check) and keeps where it is; spec
// gets the plan and the service's hostname.
func (a *apply) locate(ctx context.Context, spec kinds.CreateSpec) (err error) {
	if a.t, err = a.s.targetOf(ctx, a.in, a.r.Op.ID); err != nil {
		return err
	}
	spec.Plan, spec.Hostname = a.t.plan, a.t.hostname
	a.spec = spec
	obs, err := a.check(ctx)
	if err != nil {
		return err
	}
	a.res.Node, a.archive = obs.node, obs.archive
	a.g = kinds.Guest{Client: a.t.cl.Client, Cluster: a.t.cl.Name, Node: obs.node, VMID: a.in.VMID,
		ClientID: a.t.svc.ClientID, ServiceID: a.t.svc.ServiceID, LegacyStamp: a.t.legacy}
	a.located = true
	return nil
}

func stopGuest(ctx context.Context, a *apply) error {
	ha, err := a.t.k.rep.StopForReinstall(ctx, a.g)
	if err != nil {
		return err
	}
	a.ha = ha
	// Right before destroying, read again: anything attached meanwhile refuses here.
	_, err = a.check(ctx)
	return err
}

func destroyGuest(ctx context.Context, a *apply) error {
	// Never destroy-unreferenced-disks: it would erase volumes the preview never showed (R17).
	// No purge either, so that the vmid keeps its backup and replication jobs — except for an
	// HA-managed guest, which Proxmox destroys only with purge=1.
	return a.t.k.rep.DestroyForReinstall(ctx, a.g, a.ha)
}

// allocateAddress gives the new guest the service's static address, for a plan with an
// ip_pool.
func (a *apply) allocateAddress(ctx context.Context) error {
	if a.t.plan.IPPool == nil && a.t.plan.IP6Pool == nil {
		return nil
	}
	if a.s.addrs == nil {
		return fmt.Errorf("plan %s names an ip pool but no address pools are configured", a.t.plan.Code)
	}
	addr, err := kinds.PlanAddress(ctx, a.t.plan, func(ctx context.Context, pool string) (kinds.Address, error) {
		return a.s.addrs.Allocate(ctx, pool, a.in.Key())
	})
	if err != nil {
		return fmt.Errorf("address of %s: %w", a.in.ServiceID, err)
	}
	a.spec.Address = addr
	return nil
}

func recreateGuest(ctx context.Context, a *apply) error {
	if err := a.allocateAddress(ctx); err != nil {
		return err
	}
	g, err := a.t.k.rep.Recreate(ctx, a.g, a.spec)
	a.g = g
	return err
}

func reconfigureGuest(ctx context.Context, a *apply) error {
	if a.adopt {
		if err := a.allocateAddress(ctx); err != nil {
			return err
		}
		if err := a.t.k.mod.Configure(ctx, a.g, a.spec, nil); err != nil {
			return err
		}
	}
	return a.t.k.rep.Reconfigure(ctx, a.g, a.spec)
}

func startGuest(ctx context.Context, a *apply) error {
	return a.t.k.mod.Start(ctx, a.g, nil)
}

func verifyGuest(ctx context.Context, a *apply) error {
	ins, err := a.t.k.mod.Inspect(ctx, a.g)
	if err != nil {
		return err
	}
	if !ins.Exists || !ins.Stamped || !ins.Running {
		return fmt.Errorf("guest %d does not read back running with its stamp", a.in.VMID)
	}
	if !a.t.k.rep.RootDiskFits(ins.DiskBytes, a.t.planned) {
		return fmt.Errorf("guest %d root disk reads back %d bytes, want %d", a.in.VMID, ins.DiskBytes, a.t.planned)
	}
	a.res.Node = a.g.Node
	return a.s.db.UpdateService(ctx, a.in.Key(), map[string]any{"state": models.ServiceActive, "node": a.g.Node})
}
