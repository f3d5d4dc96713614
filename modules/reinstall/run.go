package reinstall

import (
	"context"
	"errors"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// observation is what one read of the guest found.
type observation struct {
	node  string // the node the cluster listing puts the guest on ("" when it lists none)
	facts Facts
	// archive is a restore's backup volume when the kind's read looked it up ("" otherwise).
	archive string
}

// target is what a read of a reinstall's guest starts from.
type target struct {
	k      kindOf
	cl     kinds.Cluster
	vmid   int
	svc    models.ServiceKey
	legacy bool // the service may own a guest with the one-part stamp (R39, R46)
	// hostname is the service's, which the new guest is given.
	hostname string
	// except is the operation left out of our own running operations (the run itself).
	except  string
	plan    plans.Plan
	os      string
	planned int64
	// backupID is a restore's backup ("" for a reinstall): a restore is not blocked by a
	// protected backup, which may be the very one it restores.
	backupID string
}

// observe reads the guest at the target's vmid: where it is (the kind from each row's type,
// R3), what the kind reads of it (its config, pending or merged, labelled), the protected
// backups on its node, and our own operations. A guest of another kind, or without the
// service's stamp, refuses (R39). Only GET requests are sent.
func (s *Replacer) observe(ctx context.Context, t target) (observation, error) {
	own, err := s.ownFacts(ctx, t.svc, t.except)
	if err != nil {
		return observation{}, err
	}
	obs := observation{facts: own}
	obs.facts.PlannedBytes = t.planned
	at, err := s.mods.Locate(ctx, t.cl, t.vmid)
	if err != nil {
		return obs, err
	}
	if at.Found && at.Kind != t.k.mod.Kind() {
		return obs, operation.NotOurs(t.vmid)
	}
	if !at.Found {
		return obs, nil
	}
	obs.node = at.Node
	g := kinds.Guest{Client: t.cl.Client, Cluster: t.cl.Name, Node: at.Node, VMID: t.vmid, ClientID: t.svc.ClientID,
		ServiceID: t.svc.ServiceID, LegacyStamp: t.legacy}
	rd, err := s.read(ctx, t, g, &obs)
	if err != nil || !rd.Exists {
		return obs, err
	}
	if !rd.Stamped {
		s.log.Warn("guest at the service's vmid does not carry its stamp; refusing", "client_id", t.svc.ClientID, "service_id", t.svc.ServiceID, "vmid", t.vmid)
		return obs, operation.NotOurs(t.vmid)
	}
	obs.facts.Exists, obs.facts.Protected, obs.facts.Lock = true, rd.Protected, rd.Lock
	obs.facts.Mounts, obs.facts.RootKey, obs.facts.NoRoot = rd.Mounts, rd.RootKey, rd.NoRoot
	if t.backupID == "" {
		if obs.facts.ProtectedBackup, err = operation.ProtectedBackup(ctx, t.cl, obs.node, t.vmid); err != nil {
			return obs, err
		}
	}
	obs.facts.Snapshots, err = snapshotsOf(ctx, t.k.mod, g)
	return obs, err
}

// read reads the guest for the target: a restore by the kind's RestoreReader when it has one,
// which looks the backup up among the service's own on the guest's node when it needs the
// archive (and records it in obs).
func (s *Replacer) read(ctx context.Context, t target, g kinds.Guest, obs *observation) (Read, error) {
	rr, ok := t.k.rd.(RestoreReader)
	if !ok || t.backupID == "" {
		return t.k.rd.ReadForReinstall(ctx, g, t.plan, t.os)
	}
	return rr.ReadForRestore(ctx, g, func(ctx context.Context) (string, error) {
		if obs.archive != "" {
			return obs.archive, nil
		}
		if s.backups == nil {
			return "", operation.NotAvailable()
		}
		v, err := s.backups.OwnBackup(ctx, t.svc, g.Node, t.backupID)
		obs.archive = v
		return v, err
	})
}

// snapshotsOf lists the snapshots a replacement of the guest erases (R44), oldest first; none
// for a kind without snapshots.
func snapshotsOf(ctx context.Context, mod kinds.Module, g kinds.Guest) ([]Snapshot, error) {
	sn, ok := mod.(kinds.Snapshotter)
	if !ok {
		return nil, nil
	}
	list, err := sn.Snapshots(ctx, g)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(list))
	for _, s := range list {
		out = append(out, Snapshot{Name: s.Name, CreatedAt: s.Time})
	}
	return out, nil
}

// targetOf is the target of an intent's guest; except names the run reading it ("" for none).
func (s *Replacer) targetOf(ctx context.Context, in *models.Intent, except string) (target, error) {
	plan, err := s.plans.Get(ctx, in.Plan)
	if err != nil {
		return target{}, err
	}
	k, ok := s.kind(plans.GuestType(in.GuestType))
	if !ok {
		return target{}, operation.NotAvailable()
	}
	cl, err := s.clusters.Get(in.Cluster)
	if err != nil {
		return target{}, err
	}
	svc, err := s.db.GetService(ctx, in.Key())
	if err != nil {
		return target{}, err
	}
	t := target{k: k, cl: cl, vmid: in.VMID, svc: in.Key(), legacy: svc.LegacyStamp, hostname: svc.Hostname, except: except, plan: plan,
		os: in.OS, planned: int64(plan.DiskGiB) * kinds.GiB}
	if in.Kind == models.IntentKindRestore {
		if k.res == nil || in.BackupID == nil {
			return target{}, operation.NotAvailable()
		}
		t.backupID = *in.BackupID
	}
	return t, nil
}

// preview is one run of phase 1.
type preview struct {
	s *Replacer
	r *executor.Run
	p previewPayload
}

// previewSteps is phase 1: one stage that only reads.
var previewSteps = []executor.Step[*preview]{{Stage: StageRead, Run: readPreview}}

// runPreview is phase 1: it reads, judges, and records the preview on the operation; the intent
// takes it when somebody reads it. Nothing is changed (R18).
func (s *Replacer) runPreview(ctx context.Context, r *executor.Run) error {
	pr := &preview{s: s, r: r}
	if err := r.Payload(&pr.p); err != nil {
		return err
	}
	return executor.RunSteps(ctx, r, previewSteps, pr)
}

func readPreview(ctx context.Context, pr *preview) error {
	in, err := pr.s.db.GetIntent(ctx, pr.p.IntentID)
	if err != nil {
		return err
	}
	t, err := pr.s.targetOf(ctx, in, "")
	if err != nil {
		return err
	}
	obs, err := pr.s.observe(ctx, t)
	if err != nil {
		return operation.ProblemOf(err)
	}
	if t.backupID != "" && obs.facts.Exists && obs.archive == "" {
		// The backup is looked up among the service's own, on the guest's node (a kind whose
		// restore read needs the archive did that already).
		if _, err := pr.s.backups.OwnBackup(ctx, in.Key(), obs.node, t.backupID); err != nil {
			return operation.ProblemOf(err)
		}
	}
	pv := Preview{Mounts: []Mount{}, Snapshots: append([]Snapshot{}, obs.facts.Snapshots...)}
	t.k.rd.Shape(&pv, obs.facts)
	pv.Confirmations, pv.Blockers = ConfirmationsOf(obs.facts), Check(obs.facts)
	pr.r.SetResult(pv)
	return nil
}

// probe tells, after a failure at or after destroy, whether the guest still exists (nil when
// that cannot be told).
func (s *Replacer) probe(ctx context.Context, a *apply) *bool {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	existed, err := a.t.k.rep.Exists(pctx, a.g)
	if err != nil {
		s.log.Warn("could not tell whether the guest still exists", "service_id", a.in.ServiceID, "vmid", a.in.VMID, "err", err)
		return nil
	}
	return &existed
}

// endApply records the apply's result: the blockers its own check found and, for a failure at
// or after the irreversible stage (R27, R28), the stage, whether the guest still existed, and
// the service's needs_reconciliation (the executor keeps the lock closed).
func (s *Replacer) endApply(ctx context.Context, a *apply, err error) error {
	if err != nil {
		err = operation.ProblemOf(err)
		var p *i18n.Problem
		if errors.As(err, &p) {
			for _, b := range p.Blockers {
				a.res.Blockers = append(a.res.Blockers, Blocker{Code: BlockerCode(b.Code), Params: b.Params})
			}
		}
		if a.r.Action.Destructive(a.r.Op.StageIndex) {
			a.res.FailedStage = a.r.Op.Stage
			if a.located {
				a.res.GuestExisted, a.res.Checked = s.probe(ctx, a), true
			}
			operation.SetState(s.db, s.log, a.in.Key(), models.ServiceNeedsReconciliation)
		}
	}
	a.r.SetResult(a.res)
	return err
}
