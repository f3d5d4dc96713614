package reinstall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules"
	"pvebill/modules/executor"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// observation is what one read of the guest found.
type observation struct {
	node  string // the node the cluster listing puts the guest on ("" when it lists none)
	facts Facts
}

func (s *Service) cluster(name string) (Cluster, error) {
	c, ok := s.clusters[name]
	if !ok {
		return Cluster{}, i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).
			Perm(i18n.Temporary).Wrap(fmt.Errorf("cluster %q is not configured", name))
	}
	return c, nil
}

// observe reads the container at vmid: where it is (the kind from each row's type, R3), its
// active config, its pending section, the protected backups on its node, and our own
// operations; a guest without the service's stamp refuses (R39). Only GET requests are sent.
func (s *Service) observe(ctx context.Context, cl Cluster, vmid int, serviceID, except string, plannedBytes int64) (observation, error) {
	own, err := s.ownFacts(ctx, serviceID, except)
	if err != nil {
		return observation{}, err
	}
	obs := observation{facts: own}
	obs.facts.PlannedBytes = plannedBytes
	rows, err := cl.Client.Cluster().Resources(ctx, "vm")
	if err != nil {
		return obs, fmt.Errorf("list guests of %s: %w", cl.Name, err)
	}
	for _, r := range rows {
		if r.VMID.Int() != vmid || (r.Type != "lxc" && r.Type != "qemu") {
			continue
		}
		if r.Type != "lxc" {
			return obs, notOurs(vmid)
		}
		obs.node = r.Node
	}
	if obs.node == "" {
		return obs, nil
	}
	c := cl.Client.Node(obs.node).LXC(vmid)
	cfg, err := c.ConfigCurrent(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return obs, nil
	}
	if err != nil {
		return obs, fmt.Errorf("read container %d config: %w", vmid, err)
	}
	if !modules.HasStamp(cfg.Description, serviceID) {
		s.log.Warn("guest at the service's vmid does not carry its stamp; refusing", "service_id", serviceID, "vmid", vmid)
		return obs, notOurs(vmid)
	}
	obs.facts.Exists = true
	obs.facts.Protected = bool(cfg.Protection)
	obs.facts.Lock = cfg.Lock
	pending, err := c.Pending(ctx)
	if err != nil {
		return obs, fmt.Errorf("read container %d pending config: %w", vmid, err)
	}
	obs.facts.Mounts = Classified(vmid, EntriesOf(pending))
	if obs.facts.ProtectedBackup, err = s.protectedBackup(ctx, cl, obs.node, vmid); err != nil {
		return obs, err
	}
	return obs, nil
}

// EntriesOf turns the rows of GET .../pending into config entries: each key's active value,
// and its pending value when that differs.
func EntriesOf(items []pve.PendingItem) []Entry {
	var out []Entry
	for _, it := range items {
		v, p := string(it.Value), string(it.Pending)
		if v != "" {
			out = append(out, Entry{Key: it.Key, Value: v})
		}
		if p != "" && p != v {
			out = append(out, Entry{Key: it.Key, Value: p, Pending: true})
		}
	}
	return out
}

// protectedBackup reports whether a storage of the node holding backups has a protected backup
// of vmid.
func (s *Service) protectedBackup(ctx context.Context, cl Cluster, node string, vmid int) (bool, error) {
	n := cl.Client.Node(node)
	stores, err := n.Storages(ctx, "backup")
	if err != nil {
		return false, fmt.Errorf("list backup storages of %s: %w", node, err)
	}
	for _, st := range stores {
		if !strings.Contains(st.Content, "backup") {
			continue
		}
		items, err := n.Storage(st.Storage).Content(ctx, pve.ContentFilter{Content: "backup", VMID: vmid})
		if err != nil {
			return false, fmt.Errorf("list backups on %s: %w", st.Storage, err)
		}
		for _, it := range items {
			if bool(it.Protected) && it.VMID.Int() == vmid {
				return true, nil
			}
		}
	}
	return false, nil
}

// runPreview is phase 1: it reads, judges, and records the preview on the operation; the intent
// takes it when somebody reads it. Nothing is changed (R18).
func (s *Service) runPreview(ctx context.Context, r *executor.Run) error {
	var p previewPayload
	if err := r.Payload(&p); err != nil {
		return err
	}
	if err := r.Stage(ctx, "read"); err != nil {
		return err
	}
	in, err := models.GetIntent(ctx, s.db.Gorm, p.IntentID)
	if err != nil {
		return err
	}
	plan, err := s.plans.Get(ctx, in.Plan)
	if err != nil {
		return err
	}
	cl, err := s.cluster(in.Cluster)
	if err != nil {
		return err
	}
	planned := int64(plan.DiskGiB) * modules.GiB
	pv := Preview{Mounts: []Mount{}}
	if plans.GuestType(in.GuestType) == plans.VM {
		tmpl, err := plan.VMTemplate(in.OS)
		if err != nil {
			return err
		}
		obs, err := s.observeVM(ctx, cl, in.VMID, in.ServiceID, "", planned, tmpl)
		if err != nil {
			return problemOf(err)
		}
		sz := SizesOf(obs.facts.Mounts, obs.facts.RootKey, planned)
		pv.BootDisk, pv.Disks, pv.RootKey = &sz, obs.facts.Mounts, obs.facts.RootKey
		if pv.Disks == nil {
			pv.Disks = []Mount{}
		}
		pv.Confirmations, pv.Blockers = Confirmations(obs.facts.Mounts), Check(obs.facts)
	} else {
		obs, err := s.observe(ctx, cl, in.VMID, in.ServiceID, "", planned)
		if err != nil {
			return problemOf(err)
		}
		sz := Sizes(obs.facts.Mounts, planned)
		pv.Rootfs = &sz
		if obs.facts.Mounts != nil {
			pv.Mounts = obs.facts.Mounts
		}
		pv.Confirmations, pv.Blockers = Confirmations(obs.facts.Mounts), Check(obs.facts)
	}
	r.SetResult(pv)
	return nil
}

// problemOf sorts an error of a Proxmox call into a typed problem.
func problemOf(err error) error {
	var p *i18n.Problem
	if errors.As(err, &p) {
		return p
	}
	var apiErr *pve.APIError
	switch {
	case errors.Is(err, pve.ErrTaskFailed):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	case errors.Is(err, pve.ErrProtected):
		return Blocked([]Blocker{{Code: ProtectionEnabled}}).Wrap(err)
	case errors.Is(err, pve.ErrLocked):
		return Blocked([]Blocker{{Code: ProxmoxLock, Params: map[string]string{"lock": "unknown"}}}).Wrap(err)
	case errors.Is(err, pve.ErrTransient), errors.Is(err, pve.ErrAuth), errors.Is(err, pve.ErrTLS),
		errors.Is(err, context.DeadlineExceeded):
		return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).Wrap(err)
	case errors.As(err, &apiErr):
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Wrap(err)
	}
	return err
}

// runApply is phase 2 (R22, R26–R28, R30): precheck (the third check, against the config the
// run reads itself, and the confirmations compared pair for pair), stop, a last re-read,
// destroy without destroy-unreferenced-disks (R17), create (a container with the plan in
// allocation form and the stamp, from the container module's own create body; a VM cloned from
// the template by the VM module, cloud-init and plan included), configure, start, verify. A
// failure before destroy is failed and releases the lock; at or after it, needs_reconciliation
// with the vmid, the stage and whether the guest still existed (the executor keeps the lock
// closed).
func (s *Service) runApply(ctx context.Context, r *executor.Run) (err error) {
	var p applyPayload
	if err := r.Payload(&p); err != nil {
		return err
	}
	in, err := models.GetIntent(ctx, s.db.Gorm, p.IntentID)
	if err != nil {
		return err
	}
	res := &runResult{VMID: in.VMID}
	var probe func() *bool
	defer func() {
		if err != nil {
			err = problemOf(err)
			var p *i18n.Problem
			if errors.As(err, &p) {
				for _, b := range p.Blockers {
					res.Blockers = append(res.Blockers, Blocker{Code: BlockerCode(b.Code), Params: b.Params})
				}
			}
			if r.Action.Destructive(r.Op.StageIndex) {
				res.FailedStage = r.Op.Stage
				if probe != nil {
					res.GuestExisted, res.Checked = probe(), true
				}
				s.setState(in.ServiceID, models.ServiceNeedsReconciliation)
			}
		}
		r.SetResult(res)
	}()
	if err := r.Stage(ctx, "precheck"); err != nil {
		return err
	}
	password, _ := r.Secret(secretPassword)
	keys, _ := r.Secret(secretSSHKeys)
	if password == "" && keys == "" {
		// The secrets lived in the memory of a process that is gone: nothing was touched; ask
		// for the apply again.
		return i18n.NewProblem(http.StatusConflict, i18n.CodeOperationInterrupted).Perm(i18n.Temporary)
	}
	svc, err := models.GetService(ctx, s.db.Gorm, in.ServiceID)
	if err != nil {
		return err
	}
	plan, err := s.plans.Get(ctx, in.Plan)
	if err != nil {
		return err
	}
	kind := plans.GuestType(in.GuestType)
	mod, ok := s.mods.Get(kind)
	if !ok {
		return i18n.NewProblem(http.StatusConflict, i18n.CodeNotYetAvailable).Perm(i18n.Temporary)
	}
	cl, err := s.cluster(in.Cluster)
	if err != nil {
		return err
	}
	tmpl := 0
	if kind == plans.VM {
		if tmpl, err = plan.VMTemplate(in.OS); err != nil {
			return err
		}
	}
	planned := int64(plan.DiskGiB) * modules.GiB
	// The third check: the blockers and the confirmations against what this run reads itself.
	check := func() (observation, error) {
		var obs observation
		var err error
		if kind == plans.VM {
			obs, err = s.observeVM(ctx, cl, in.VMID, in.ServiceID, r.Op.ID, planned, tmpl)
		} else {
			obs, err = s.observe(ctx, cl, in.VMID, in.ServiceID, r.Op.ID, planned)
		}
		if err != nil {
			return obs, err
		}
		if bs := Check(obs.facts); len(bs) > 0 {
			return obs, Blocked(bs)
		}
		if !SameConfirmations(Confirmations(obs.facts.Mounts), p.Confirmations) {
			s.log.Warn("config changed since the preview; refusing", "service_id", in.ServiceID, "vmid", in.VMID)
			return obs, stale()
		}
		return obs, nil
	}
	obs, err := check()
	if err != nil {
		return err
	}
	res.Node = obs.node
	g := modules.Guest{Client: cl.Client, Cluster: cl.Name, Node: obs.node, VMID: in.VMID, ServiceID: in.ServiceID}
	ops := guestOpsOf(cl, kind, obs.node, in.VMID)
	probe = func() *bool {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		existed, err := ops.exists(pctx)
		if err != nil {
			s.log.Warn("could not tell whether the guest still exists", "service_id", in.ServiceID, "vmid", in.VMID, "err", err)
			return nil
		}
		return &existed
	}

	if err := r.Stage(ctx, "stop"); err != nil {
		return err
	}
	ha, err := ops.stop(ctx)
	if err != nil {
		return err
	}
	// Right before destroying, read again: anything attached meanwhile refuses here.
	if _, err := check(); err != nil {
		return err
	}

	if err := r.Stage(ctx, "destroy"); err != nil {
		return err
	}
	// Never destroy-unreferenced-disks: it would erase volumes the preview never showed (R17).
	// No purge either, so that the vmid keeps its backup and replication jobs — except for an
	// HA-managed guest, which Proxmox destroys only with purge=1.
	if err := ops.destroy(ctx, ha); err != nil {
		return err
	}

	if err := r.Stage(ctx, "create"); err != nil {
		return err
	}
	spec := modules.CreateSpec{Plan: plan, OS: in.OS, Hostname: svc.Hostname, Password: password}
	if keys != "" {
		spec.SSHKeys = strings.Split(keys, "\n")
	}
	if plan.IPPool != nil {
		if s.addrs == nil {
			return fmt.Errorf("plan %s names ip_pool %s but no address pools are configured", plan.Code, *plan.IPPool)
		}
		a, err := s.addrs.Allocate(ctx, *plan.IPPool, in.ServiceID)
		if err != nil {
			return fmt.Errorf("address of %s: %w", in.ServiceID, err)
		}
		spec.Address = &a
	}
	if kind == plans.VM {
		// Proxmox clones on the node that holds the template.
		tnode, _, err := locate(ctx, cl, tmpl)
		if err != nil {
			return err
		}
		if tnode == "" {
			return fmt.Errorf("template %d not found on cluster %s", tmpl, cl.Name)
		}
		g.Node = tnode
		ops = guestOpsOf(cl, kind, tnode, in.VMID)
		if err := mod.Create(ctx, g, spec, nil); err != nil {
			return err
		}
	} else {
		req, err := lxc.CreateRequest(in.ServiceID, spec)
		if err != nil {
			return err
		}
		if _, err := cl.Client.Node(g.Node).LXC(in.VMID).Create(ctx, req); err != nil {
			return fmt.Errorf("create container %d: %w", in.VMID, err)
		}
	}

	if err := r.Stage(ctx, "configure"); err != nil {
		return err
	}
	if kind == plans.VM {
		// The VM module configured the clone (cloud-init, plan, firewall) as part of its
		// create; read back what a reinstall promises.
		ins, err := mod.Inspect(ctx, g)
		if err != nil {
			return err
		}
		if !ins.Exists || !ins.Stamped || !ins.OnBoot || ins.DiskBytes < planned {
			return fmt.Errorf("VM %d does not read back stamped, onboot, with a %d-byte boot disk", in.VMID, planned)
		}
	} else if err := mod.Configure(ctx, g, spec, nil); err != nil {
		return err
	}
	if err := r.Stage(ctx, "start"); err != nil {
		return err
	}
	if err := mod.Start(ctx, g, nil); err != nil {
		return err
	}
	if err := r.Stage(ctx, "verify"); err != nil {
		return err
	}
	ins, err := mod.Inspect(ctx, g)
	if err != nil {
		return err
	}
	if !ins.Exists || !ins.Stamped || !ins.Running {
		return fmt.Errorf("guest %d does not read back running with its stamp", in.VMID)
	}
	if ins.DiskBytes < planned || (kind == plans.Container && ins.DiskBytes != planned) {
		return fmt.Errorf("guest %d root disk reads back %d bytes, want %d", in.VMID, ins.DiskBytes, planned)
	}
	res.Node = g.Node
	return models.UpdateService(ctx, s.db.Gorm, in.ServiceID, map[string]any{"state": models.ServiceActive, "node": g.Node})
}

// guestOps are the power and destroy calls of one guest kind, each reading its effect back.
type guestOps struct {
	// stop stops the guest if it runs and reports whether it is HA-managed.
	stop func(ctx context.Context) (ha bool, err error)
	// destroy destroys it (purge only when asked) and reads back that the config is gone.
	destroy func(ctx context.Context, purge bool) error
	// exists tells whether a config is at the vmid.
	exists func(ctx context.Context) (bool, error)
}

func guestOpsOf(cl Cluster, kind plans.GuestType, node string, vmid int) guestOps {
	if kind == plans.VM {
		q := cl.Client.Node(node).QEMU(vmid)
		return guestOps{
			stop: func(ctx context.Context) (bool, error) {
				st, err := q.Status(ctx)
				if err != nil {
					return false, fmt.Errorf("read VM %d status: %w", vmid, err)
				}
				if st.Running() {
					if _, err := q.Stop(ctx); err != nil && !errors.Is(err, pve.ErrNotRunning) {
						return false, fmt.Errorf("stop VM %d: %w", vmid, err)
					}
					if st, err = q.Status(ctx); err != nil {
						return false, fmt.Errorf("read VM %d status: %w", vmid, err)
					}
					if st.Running() {
						return false, fmt.Errorf("VM %d reads back running after stop", vmid)
					}
				}
				return st.HA != nil && bool(st.HA.Managed), nil
			},
			destroy: func(ctx context.Context, purge bool) error {
				if _, err := q.Delete(ctx, pve.QEMUDeleteOptions{Purge: purge}); err != nil {
					return fmt.Errorf("destroy VM %d: %w", vmid, err)
				}
				if _, err := q.ConfigCurrent(ctx); !errors.Is(err, pve.ErrNotFound) {
					return fmt.Errorf("VM %d still has a config after destroy (%v)", vmid, err)
				}
				return nil
			},
			exists: func(ctx context.Context) (bool, error) {
				_, err := q.ConfigCurrent(ctx)
				if errors.Is(err, pve.ErrNotFound) {
					return false, nil
				}
				return err == nil, err
			},
		}
	}
	c := cl.Client.Node(node).LXC(vmid)
	return guestOps{
		stop: func(ctx context.Context) (bool, error) {
			st, err := c.Status(ctx)
			if err != nil {
				return false, fmt.Errorf("read container %d status: %w", vmid, err)
			}
			if st.Running() {
				if _, err := c.Stop(ctx); err != nil && !errors.Is(err, pve.ErrNotRunning) {
					return false, fmt.Errorf("stop container %d: %w", vmid, err)
				}
				if st, err = c.Status(ctx); err != nil {
					return false, fmt.Errorf("read container %d status: %w", vmid, err)
				}
				if st.Running() {
					return false, fmt.Errorf("container %d reads back running after stop", vmid)
				}
			}
			return st.HA != nil && bool(st.HA.Managed), nil
		},
		destroy: func(ctx context.Context, purge bool) error {
			if _, err := c.Delete(ctx, pve.LXCDeleteOptions{Purge: purge}); err != nil {
				return fmt.Errorf("destroy container %d: %w", vmid, err)
			}
			if _, err := c.ConfigCurrent(ctx); !errors.Is(err, pve.ErrNotFound) {
				return fmt.Errorf("container %d still has a config after destroy (%v)", vmid, err)
			}
			return nil
		},
		exists: func(ctx context.Context) (bool, error) {
			_, err := c.ConfigCurrent(ctx)
			if errors.Is(err, pve.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		},
	}
}

// setState records a service state after a run, outside the run's context (which may be
// cancelled by then).
func (s *Service) setState(serviceID, state string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := models.UpdateService(ctx, s.db.Gorm, serviceID, map[string]any{"state": state}); err != nil {
		s.log.Error("record service state", "service_id", serviceID, "state", state, "err", err)
	}
}
