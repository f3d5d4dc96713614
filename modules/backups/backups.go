// Package backups makes, lists and deletes a service's backups (R42) through the kinds that
// have them (kinds.Backupper): vzdump on the guest's node behind the node's gate, the archive
// found and verified by its stamp, rotation at backups_max, the plan's schedule, the archives a
// restore may name (R43) and what a terminate deletes.
package backups

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// ActionBackup is a backup made now (R42), as stored in operations.action.
const ActionBackup = "backup"

// The stages of a backup (R42): a precheck that only reads, vzdump, the archive found and
// verified, then the rotation at backups_max.
const (
	StageBackup       executor.Stage = "backup"
	StageVerifyBackup executor.Stage = "verify_backup"
	StageRotate       executor.Stage = "rotate"
)

// backupCompress is the compressor of every backup (docs/proxmox.md §9.2).
const backupCompress = "zstd"

// Backup is one backup of a service as the API lists it. ID is the archive's file name, which
// names the guest kind, the vmid and the time (vzdump-lxc-5001-2026_01_31-02_00_05.tar.zst).
type Backup struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	SizeBytes int64     `json:"size_bytes"`
	Protected bool      `json:"protected"`
	Format    string    `json:"format"`
	Kind      string    `json:"kind"`
	Note      string    `json:"note"`
	volid     string
}

// backupIDPattern is the shape of a backup id: a vzdump archive's file name (docs/proxmox.md
// §9.1). An id is only ever looked up in the service's own list, never sent as given.
var backupIDPattern = regexp.MustCompile(`^vzdump-[a-z]{1,8}-[0-9]{3,9}-[0-9]{4}_[0-9]{2}_[0-9]{2}-[0-9]{2}_[0-9]{2}_[0-9]{2}\.[a-z0-9]{1,8}(?:\.[a-z0-9]{1,8})?$`)

// BackupIDOK reports whether s has the shape of a backup id.
func BackupIDOK(s string) bool { return backupIDPattern.MatchString(s) }

// Options configure a Service; every field is required.
type Options struct {
	DB      *models.DB
	Plans   *plans.Service
	Guests  *operation.Guests
	Log     *slog.Logger
	Metrics *Metrics
	// Now is the clock (time.Now but in tests).
	Now func() time.Time
}

// Service queues and runs backups and backup deletes, plans scheduled backups and finds a
// restore's archive.
type Service struct {
	db      *models.DB
	plans   *plans.Service
	guests  *operation.Guests
	log     *slog.Logger
	metrics *Metrics
	now     func() time.Time
}

// New builds the service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{db: o.DB, plans: o.Plans, guests: o.Guests, log: o.Log, metrics: o.Metrics, now: o.Now}
}

// Actions are the executor actions of the backup flow. A backup holds its worker for its whole
// vzdump: at most Config.LongWorkers of them run at once on a replica, so a window leaves
// workers for customers (R42).
func (s *Service) Actions() []executor.Action {
	return []executor.Action{
		{Name: ActionBackup, Stages: executor.StagesOf(backupSteps), Long: true, Run: s.runBackup},
		{Name: ActionBackupDelete, Stages: executor.StagesOf(backupDeleteSteps), Run: s.runBackupDelete},
	}
}

// result is what a backup operation records: the backup it made and the ids it rotated out.
type result struct {
	operation.Result
	Backup  *Backup  `json:"backup,omitempty"`
	Rotated []string `json:"rotated,omitempty"`
}

// run is one run of a backup or a backup delete.
type run struct {
	*operation.GuestRun
	s   *Service
	res *result
	// backup: what a backup's stages share.
	backup *backupRun
	// backupDelete: what a backup delete's stages share.
	backupDelete backupDeleteRun
}

// runOn runs steps as one operation's run, its payload read into what payload returns.
func (s *Service) runOn(ctx context.Context, r *executor.Run, steps []executor.Step[*run], payload func(*run) any) error {
	x := &run{s: s, res: &result{}}
	x.GuestRun = &operation.GuestRun{Res: &x.res.Result}
	var p any
	if payload != nil {
		p = payload(x)
	}
	return operation.RunOnService(ctx, s.db, r, x.GuestRun, p, steps, x, func() any { return x.res })
}

// backupSteps is a backup's step list (R42).
var backupSteps = []executor.Step[*run]{
	{Stage: operation.StagePrecheck, Run: precheckBackup},
	{Stage: StageBackup, Run: vzdumpGuest},
	{Stage: StageVerifyBackup, Run: verifyBackup},
	{Stage: StageRotate, Run: rotateBackups},
}

// backupRun is what a backup's stages share.
type backupRun struct {
	plan    plans.Plan
	kind    kinds.Backupper
	payload backupPayload
	before  map[string]bool // the ids listed before vzdump
	after   []Backup        // the list once the new backup is verified
	made    Backup
}

// backupLister is where a service's backups are listed: its cluster, the node its guest is
// on (a node-local storage lists that node's archives), the plan's storage and the kind.
type backupLister struct {
	cl      kinds.Cluster
	node    string
	storage string
	kind    kinds.Backupper
	svc     *models.Service
}

// stampOf is what a backup's notes must name to be the service's: its client and id, or for a
// service from before ids became per client also the id alone (R39, R46).
func stampOf(svc *models.Service) kinds.Guest {
	return kinds.Guest{ClientID: svc.ClientID, ServiceID: svc.ServiceID, LegacyStamp: svc.LegacyStamp}
}

// list lists the backups stamped for the service and carrying its vmid, oldest first
// (Proxmox sorts by volume id, not time, docs/proxmox.md §9.1). Anything else on the storage
// is not the service's and is never shown or touched (R42).
func (b backupLister) list(ctx context.Context) ([]Backup, error) {
	vmid := *b.svc.VMID
	items, err := b.cl.BackupVolumes(ctx, b.node, b.storage, vmid)
	if err != nil {
		return nil, err
	}
	prefix := b.storage + ":backup/"
	out := []Backup{}
	for _, it := range items {
		name, ok := strings.CutPrefix(it.VolID, prefix)
		if !ok || it.VMID.Int() != vmid || !kinds.HasStamp(it.Notes, stampOf(b.svc)) || !kinds.IsArchiveOf(b.kind, name, vmid) ||
			!BackupIDOK(name) {
			continue
		}
		out = append(out, Backup{ID: name, CreatedAt: time.Unix(int64(it.CTime), 0).UTC(), SizeBytes: int64(it.Size),
			Protected: bool(it.Protected), Format: it.Format, volid: it.VolID})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// remove deletes one listed backup and waits for the task, reported as stage's.
func (b backupLister) remove(ctx context.Context, bk Backup, stage executor.Stage, rep kinds.Reporter) error {
	res, err := b.cl.DeleteVolume(ctx, b.node, b.storage, bk.volid)
	if rep != nil {
		rep.Task(string(stage), res)
	}
	return err
}

// lister is the backup lister of a service on a plan with backups; a kind without backups is
// not_yet_available.
func (s *Service) lister(svc *models.Service, p plans.Plan) (backupLister, error) {
	if svc.VMID == nil {
		return backupLister{}, operation.Missing()
	}
	cl, err := s.guests.Cluster(svc.Cluster)
	if err != nil {
		return backupLister{}, err
	}
	mod, err := s.guests.Module(svc.GuestType)
	if err != nil {
		return backupLister{}, err
	}
	kind, ok := mod.(kinds.Backupper)
	if !ok {
		return backupLister{}, operation.NotAvailable()
	}
	return backupLister{cl: cl, node: svc.Node, storage: p.BackupStorage, kind: kind, svc: svc}, nil
}

// backupPlan is the service's plan: capability_refused, with its permanence and reason, when
// it refuses backups (a plan without a backup storage).
func (s *Service) backupPlan(ctx context.Context, svc *models.Service) (plans.Plan, error) {
	p, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return plans.Plan{}, err
	}
	st := s.plans.Capabilities(p)[plans.GuestType(svc.GuestType)][plans.CapBackup]
	return p, plans.Refused(plans.CapBackup, st)
}

// Backup queues a backup of the service now (R42), with the client's note. A plan without
// backups refuses it, and so does a service holding backups_max protected backups
// (backup_limit_reached): the service's list is the request's one Proxmox read, and nothing
// else is sent before the operation runs (its precheck checks again).
func (s *Service) Backup(ctx context.Context, clientID, serviceID string, req BackupRequest) (*models.Operation, error) {
	note, err := req.note()
	if err != nil {
		return nil, err
	}
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	p, err := s.backupPlan(ctx, svc)
	if err != nil {
		return nil, err
	}
	if svc.VMID != nil && svc.State != models.ServiceTerminated && svc.State != models.ServiceFailed {
		b, err := s.lister(svc, p)
		if err != nil {
			return nil, err
		}
		list, err := b.list(ctx)
		if err != nil {
			return nil, operation.ProblemOf(err)
		}
		if err := atLimit(list, p.BackupsMax); err != nil {
			return nil, err
		}
	}
	return s.enqueueBackup(ctx, svc, backupPayload{Note: note})
}

// atLimit is backup_limit_reached when as many backups as limit are protected: none can be
// rotated out to make room.
func atLimit(list []Backup, limit int) error {
	protected := 0
	for _, bk := range list {
		if bk.Protected {
			protected++
		}
	}
	if protected >= limit {
		return i18n.NewProblem(http.StatusConflict, i18n.CodeBackupLimitReached).Perm(i18n.Temporary).
			With("max", fmt.Sprint(limit))
	}
	return nil
}

// Backups lists the service's backups, oldest first (R42).
func (s *Service) Backups(ctx context.Context, clientID, serviceID string) ([]Backup, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	p, err := s.backupPlan(ctx, svc)
	if err != nil {
		return nil, err
	}
	b, err := s.lister(svc, p)
	if err != nil {
		return nil, err
	}
	at := s.now()
	list, err := b.list(ctx)
	if err != nil {
		return nil, operation.ProblemOf(err)
	}
	s.recordBackups(ctx, svc, list, at)
	if err := b.describe(ctx, list); err != nil {
		return nil, operation.ProblemOf(err)
	}
	return list, nil
}

// OwnBackup finds a backup among the service's own as listed on node (stamped for it, of its
// vmid and kind, on the plan's backup storage) and answers its volume id: the one way a restore
// names an archive (R43). Anything else is 404 not_found, whatever is on the storage.
func (s *Service) OwnBackup(ctx context.Context, k models.ServiceKey, node, backupID string) (string, error) {
	svc, err := s.db.GetService(ctx, k)
	if err != nil {
		return "", err
	}
	_, list, i, err := s.findBackup(ctx, svc, node, backupID)
	if err != nil {
		return "", err
	}
	return list[i].volid, nil
}

// findBackup looks backupID up in the service's own list, read on node (the service's node
// when ""), and answers the lister, the list and the backup's index in it: the one way a
// client's backup id reaches a volume (R42). A plan without backups refuses; an id not in the
// list is 404 not_found.
func (s *Service) findBackup(ctx context.Context, svc *models.Service, node, backupID string) (backupLister, []Backup, int, error) {
	p, err := s.backupPlan(ctx, svc)
	if err != nil {
		return backupLister{}, nil, 0, err
	}
	if !BackupIDOK(backupID) {
		return backupLister{}, nil, 0, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	b, err := s.lister(svc, p)
	if err != nil {
		return backupLister{}, nil, 0, err
	}
	if node != "" {
		b.node = node
	}
	list, err := b.list(ctx)
	if err != nil {
		return backupLister{}, nil, 0, operation.ProblemOf(err)
	}
	for i, bk := range list {
		if bk.ID == backupID {
			return b, list, i, nil
		}
	}
	return backupLister{}, nil, 0, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
}

func (s *Service) runBackup(ctx context.Context, r *executor.Run) error {
	err := s.runOn(ctx, r, backupSteps, nil)
	var p backupPayload
	if perr := r.Payload(&p); perr == nil && p.Scheduled != 0 && ctx.Err() == nil {
		s.countScheduled(err)
	}
	return err
}

// precheckBackup checks the plan, the guest's stamp and locks (R39), and refuses before
// anything is sent when the kept backups cannot make room: as many protected backups as
// backups_max leave none to rotate out (backup_limit_reached).
func precheckBackup(ctx context.Context, l *run) error {
	p, err := l.s.backupPlan(ctx, l.Svc)
	if err != nil {
		return err
	}
	if err := l.Precheck(ctx, l.s.guests); err != nil {
		return err
	}
	kind, ok := l.T.Mod.(kinds.Backupper)
	if !ok {
		return operation.NotAvailable()
	}
	l.backup = &backupRun{plan: p, kind: kind, before: map[string]bool{}}
	if err := l.R.Payload(&l.backup.payload); err != nil {
		return err
	}
	list, err := l.backupLister().list(ctx)
	if err != nil {
		return err
	}
	for _, bk := range list {
		l.backup.before[bk.ID] = true
	}
	return atLimit(list, p.BackupsMax)
}

// backupLister is the lister of a running backup's guest, on the node it was found on.
func (l *run) backupLister() backupLister {
	return backupLister{cl: l.T.Cluster, node: l.T.Guest.Node, storage: l.backup.plan.BackupStorage, kind: l.backup.kind, svc: l.Svc}
}

// vzdumpGuest backs the guest up on its node with remove=0, so Proxmox prunes nothing by
// itself, in the plan's mode, zstd-compressed, with the service's stamp as the archive's
// notes (R42, docs/proxmox.md §15), and waits for the task.
func vzdumpGuest(ctx context.Context, l *run) error {
	keep := false
	res, err := l.T.Cluster.Vzdump(ctx, l.T.Guest.Node, kinds.VzdumpParams{VMID: l.T.Guest.VMID,
		Storage: l.backup.plan.BackupStorage, Mode: string(l.backup.plan.BackupMode), Compress: backupCompress,
		NotesTemplate: notesTemplate(l.T.Guest, l.backup.payload), Remove: &keep})
	l.Rep.Task(string(StageBackup), res)
	if err != nil {
		return err
	}
	// The node's vzdump is over: the next backup behind the node's gate may start while this
	// one is verified and rotated (R42).
	if gerr := l.R.ReleaseGate(ctx); gerr != nil {
		l.s.log.Warn("release the node's backup gate", "service_id", l.Svc.ServiceID, "err", gerr)
	}
	return nil
}

// verifyBackup finds the new archive by listing the storage (the task does not name it) and
// verifies it: listed with the service's stamp and vmid, of the guest's kind, not empty.
func verifyBackup(ctx context.Context, l *run) error {
	list, err := l.backupLister().list(ctx)
	if err != nil {
		return err
	}
	var made *Backup
	for i := range list {
		if !l.backup.before[list[i].ID] {
			made = &list[i] // the list is oldest first: the last new one wins
		}
	}
	if made == nil || made.SizeBytes <= 0 {
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeBackupNotVerified).Perm(i18n.Temporary)
	}
	// The new archive's notes are the ones vzdump was given: its kind and note need no read.
	made.Kind, made.Note = l.backup.payload.kind(), l.backup.payload.Note
	l.backup.made, l.backup.after = *made, list
	l.res.Backup = made
	return nil
}

// rotateBackups deletes the oldest unprotected backups of the service until backups_max are
// kept; the new one is never among them. It runs only once the new one is verified (R42).
func rotateBackups(ctx context.Context, l *run) error {
	kept := append([]Backup(nil), l.backup.after...)
	b := l.backupLister()
	for i := 0; i < len(kept) && len(kept) > l.backup.plan.BackupsMax; {
		bk := kept[i]
		if bk.Protected || bk.ID == l.backup.made.ID {
			i++
			continue
		}
		if err := b.remove(ctx, bk, StageRotate, l.Rep); err != nil {
			l.s.recordBackups(ctx, l.Svc, kept, l.s.now())
			return err
		}
		l.res.Rotated = append(l.res.Rotated, bk.ID)
		kept = append(kept[:i], kept[i+1:]...)
	}
	l.s.recordBackups(ctx, l.Svc, kept, l.s.now())
	return nil
}

// StageDeleteBackups is the stage of a terminate that deletes the service's backups (its tasks
// are reported under it).
const StageDeleteBackups executor.Stage = "delete_backups"

// DeleteOnTerminate deletes the service's backups, listed on node (the service's node when
// ""), after its guest is destroyed when the plan says delete (R42); keep leaves them.
// Protected backups stay (Proxmox refuses to delete them) and are answered, for the terminate's
// result. Foreign and unstamped archives are never listed, so never touched.
func (s *Service) DeleteOnTerminate(ctx context.Context, svc *models.Service, node string, rep kinds.Reporter) ([]string, error) {
	p, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return nil, err
	}
	if !p.HasBackups() || p.BackupsOnTerminate != plans.BackupsDelete || svc.VMID == nil {
		return nil, nil
	}
	b, err := s.lister(svc, p)
	if err != nil {
		return nil, err
	}
	if node != "" {
		b.node = node
	}
	list, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	var kept []string
	var left []Backup
	for _, bk := range list {
		if bk.Protected {
			kept = append(kept, bk.ID)
			left = append(left, bk)
			continue
		}
		if err := b.remove(ctx, bk, StageDeleteBackups, rep); err != nil {
			return kept, err
		}
	}
	s.recordBackups(ctx, svc, left, s.now())
	return kept, nil
}

// recordBackups writes what the service's backup list now holds (count and bytes) for the
// usage report's backup_bytes and the per-service gauge. The figure is recorded by what
// pvebill does and sees (a backup, a rotation, a delete, a listing, a terminate) rather than
// read from Proxmox per report, so that a report over many services sends no Proxmox call; a
// failure to record is logged, never the operation's failure. at is when list was true (read,
// or left by a removal): an older figure never replaces a newer one.
func (s *Service) recordBackups(ctx context.Context, svc *models.Service, list []Backup, at time.Time) {
	var bytes int64
	for _, b := range list {
		bytes += b.SizeBytes
	}
	if err := s.db.RecordServiceBackups(ctx, svc.ID, len(list), bytes, at); err != nil {
		s.log.Warn("record backup bytes", "service_id", svc.ServiceID, "err", err)
	}
}
