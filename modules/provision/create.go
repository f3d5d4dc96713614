package provision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules"
	"pvebill/modules/executor"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// CreateRequest is the body of POST /v1/services (API.md Create). The root password and the
// SSH keys travel to Proxmox as transient secrets and are never stored (R26).
type CreateRequest struct {
	ServiceID    string   `json:"service_id" validate:"required,serviceid"`
	Plan         string   `json:"plan" validate:"required,max=64"`
	GuestType    string   `json:"guest_type" validate:"omitempty,oneof=container vm"`
	Hostname     string   `json:"hostname" validate:"required,max=255,hostname_rfc1123"`
	OS           string   `json:"os" validate:"required,max=64"`
	RootPassword string   `json:"root_password" validate:"omitempty,min=5,max=128"`
	SSHKeys      []string `json:"ssh_keys" validate:"omitempty,max=32,dive,required,max=8192"`
}

// Secret names of a create operation (executor.Secrets).
const (
	secretPassword = "root_password"
	secretSSHKeys  = "ssh_keys"
)

// createPayload is what a create operation stores: no secret.
type createPayload struct {
	Plan      string `json:"plan"`
	GuestType string `json:"guest_type"`
	OS        string `json:"os"`
	Hostname  string `json:"hostname"`
}

// paramsHash identifies a create's parameters for R36. The password is not part of it (a hash
// of a short secret is itself a secret, R26); the public keys are.
func paramsHash(p createPayload, keys []string) string {
	b, _ := json.Marshal(struct {
		createPayload
		Keys []string `json:"ssh_keys"`
	}{p, keys})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Create validates a create (R4 checkout, the OS catalog) and writes the service and its
// create operation. A repeat for an existing service_id with the same parameters returns the
// existing operation (created false) — or, when that create failed, a new create operation that
// adopts whatever the failed one left — and different parameters are 409 service_exists (R36).
func (s *Service) Create(ctx context.Context, clientID string, req CreateRequest) (op *models.Operation, created bool, err error) {
	if req.RootPassword == "" && len(req.SSHKeys) == 0 {
		return nil, false, i18n.Validation(i18n.FieldError{Field: "root_password", Code: i18n.FieldRequiredOne, Param: "root_password, ssh_keys"})
	}
	plan, err := s.plans.Get(ctx, req.Plan)
	if err != nil {
		var p *i18n.Problem
		if errors.As(err, &p) && p.Code == i18n.CodeNotFound {
			return nil, false, i18n.Validation(i18n.FieldError{Field: "plan", Code: i18n.FieldInvalid})
		}
		return nil, false, err
	}
	kind, err := plan.ChooseGuestType(req.GuestType)
	if err != nil {
		return nil, false, err
	}
	switch kind {
	case plans.Container:
		_, err = plan.ContainerTemplate(req.OS)
	case plans.VM:
		_, err = plan.VMTemplate(req.OS)
	}
	if err != nil {
		return nil, false, err
	}
	if _, err := s.module(string(kind)); err != nil {
		return nil, false, err
	}
	if _, err := s.cluster(plan.Cluster); err != nil {
		return nil, false, err
	}
	payload := createPayload{Plan: plan.Code, GuestType: string(kind), OS: req.OS, Hostname: strings.ToLower(req.Hostname)}
	hash := paramsHash(payload, req.SSHKeys)
	raw, _ := json.Marshal(payload)
	secrets := map[string]string{}
	if req.RootPassword != "" {
		secrets[secretPassword] = req.RootPassword
	}
	if len(req.SSHKeys) > 0 {
		secrets[secretSSHKeys] = strings.Join(req.SSHKeys, "\n")
	}
	svc := &models.Service{ServiceID: req.ServiceID, ClientID: clientID, Plan: plan.Code, GuestType: string(kind),
		Cluster: plan.Cluster, Hostname: payload.Hostname, State: models.ServiceProvisioning, ParamsHash: hash}
	// The secrets are in place before the operation row exists: a worker may claim it at once.
	op = &models.Operation{ID: models.NewID(), ServiceID: req.ServiceID, ClientID: clientID, Action: ActionCreate, Payload: string(raw)}
	s.secrets.Put(op.ID, secrets)
	s.secrets.Pin(op)
	err = s.db.CreateServiceOperation(ctx, svc, op)
	if err == nil {
		return op, true, nil
	}
	s.secrets.Drop(op.ID)
	if !errors.Is(err, models.ErrDuplicate) {
		return nil, false, fmt.Errorf("write service %s: %w", req.ServiceID, err)
	}
	existing, err := models.GetService(ctx, s.db.Gorm, req.ServiceID)
	if err != nil {
		return nil, false, fmt.Errorf("read service %s: %w", req.ServiceID, err)
	}
	if existing.ClientID != clientID || existing.ParamsHash != hash {
		return nil, false, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceExists).Perm(i18n.Permanent)
	}
	last, err := models.LatestOperation(ctx, s.db.Gorm, req.ServiceID, ActionCreate)
	if err != nil {
		return nil, false, err
	}
	if existing.State != models.ServiceFailed || last.State != models.OpFailed || existing.LockOperationID != nil {
		return last, false, nil
	}
	// The previous create failed: a new one adopts what it left (R36, R39).
	if err := models.UpdateService(ctx, s.db.Gorm, req.ServiceID, map[string]any{"state": models.ServiceProvisioning}); err != nil {
		return nil, false, err
	}
	op = &models.Operation{ID: models.NewID(), ServiceID: req.ServiceID, ClientID: clientID, Action: ActionCreate, Payload: string(raw)}
	s.secrets.Put(op.ID, secrets)
	s.secrets.Pin(op)
	if err := models.InsertOperation(ctx, s.db.Gorm, op); err != nil {
		s.secrets.Drop(op.ID)
		return nil, false, fmt.Errorf("write create operation: %w", err)
	}
	return op, true, nil
}

// runCreate places, allocates, creates, starts and verifies a guest. A service that already has
// a vmid (a retried create) first looks there: a guest carrying this service's stamp is adopted
// instead of making a second one.
func (s *Service) runCreate(ctx context.Context, r *executor.Run) (err error) {
	var p createPayload
	if err := r.Payload(&p); err != nil {
		return err
	}
	res := &result{}
	rep := &reporter{}
	stage := ""
	defer func() {
		res.Warnings = rep.Warnings
		if err != nil {
			res.fail(stage, err)
			// A lost lease belongs to another worker now, and a shutdown gives the operation
			// back to the queue: neither is the create's failure.
			if !errors.Is(err, models.ErrLeaseLost) && ctx.Err() == nil {
				s.setState(r.Op.ServiceID, models.ServiceFailed)
			}
			err = problemOf(err)
		}
		r.SetResult(res)
	}()
	enter := func(name string) error { stage = name; return r.Stage(ctx, name) }

	svc, err := models.GetService(ctx, s.db.Gorm, r.Op.ServiceID)
	if err != nil {
		return err
	}
	plan, err := s.plans.Get(ctx, p.Plan)
	if err != nil {
		return err
	}
	mod, err := s.module(p.GuestType)
	if err != nil {
		return err
	}
	cl, err := s.cluster(plan.Cluster)
	if err != nil {
		return err
	}
	password, _ := r.Secret(secretPassword)
	keys, _ := r.Secret(secretSSHKeys)
	if password == "" && keys == "" {
		// The secrets lived in the memory of a process that is gone: ask for the create again.
		return i18n.NewProblem(http.StatusConflict, i18n.CodeOperationInterrupted).Perm(i18n.Temporary)
	}
	spec := modules.CreateSpec{Plan: plan, OS: p.OS, Hostname: p.Hostname, Password: password}
	if keys != "" {
		spec.SSHKeys = strings.Split(keys, "\n")
	}

	if err := enter("place"); err != nil {
		return err
	}
	var node string
	if plans.GuestType(p.GuestType) == plans.VM {
		tmpl, err := plan.VMTemplate(p.OS)
		if err != nil {
			return err
		}
		node, err = s.templateNode(ctx, cl, tmpl)
		if err != nil {
			return err
		}
	} else if node, err = s.placeNode(ctx, cl, plan, svc.ServiceID); err != nil {
		return err
	}
	if plan.IPPool != nil {
		if s.addrs == nil {
			return i18n.NewProblem(http.StatusConflict, i18n.CodeNotYetAvailable).Perm(i18n.Temporary).
				Wrap(fmt.Errorf("plan %s names ip_pool %s but no address pools are configured", plan.Code, *plan.IPPool))
		}
		a, err := s.addrs.Allocate(ctx, *plan.IPPool, svc.ServiceID)
		if err != nil {
			return fmt.Errorf("allocate address: %w", err)
		}
		spec.Address = &a
	}

	if err := enter("allocate"); err != nil {
		return err
	}
	skip := map[int]bool{}
	adopted := false
	var vmid int
	if svc.VMID != nil {
		// A retried create: is the guest it made already there?
		at, err := s.locate(ctx, cl, *svc.VMID)
		if err != nil {
			return err
		}
		if at.Found {
			g := modules.Guest{Client: cl.Client, Cluster: cl.Name, Node: at.Node, VMID: *svc.VMID, ServiceID: svc.ServiceID}
			if at.Kind == plans.GuestType(p.GuestType) {
				in, err := mod.Inspect(ctx, g)
				if err != nil {
					return err
				}
				adopted = in.Exists && in.Stamped
			}
			if adopted {
				vmid, node = *svc.VMID, at.Node
				s.log.Info("create adopts the guest an earlier attempt made", "service_id", svc.ServiceID, "vmid", vmid)
			} else {
				skip[*svc.VMID] = true
			}
		}
		if !adopted {
			if err := models.ReleaseVMID(ctx, s.db.Gorm, svc.ServiceID); err != nil {
				return err
			}
		}
	}

	for tries := 0; !adopted; tries++ {
		if tries >= s.attempts {
			return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).
				Wrap(fmt.Errorf("vmids kept being taken on %s", cl.Name))
		}
		if vmid, err = s.allocateVMID(ctx, cl, svc.ServiceID, node, skip); err != nil {
			return err
		}
		if err := models.UpdateService(ctx, s.db.Gorm, svc.ServiceID, map[string]any{"node": node}); err != nil {
			return err
		}
		if stage != "create" {
			if err := enter("create"); err != nil {
				return err
			}
		}
		g := modules.Guest{Client: cl.Client, Cluster: cl.Name, Node: node, VMID: vmid, ServiceID: svc.ServiceID}
		err = mod.Create(ctx, g, spec, rep)
		if errors.Is(err, pve.ErrAlreadyExists) {
			// Somebody took the id between the check and the create: pick another (R2).
			s.log.Warn("vmid taken at create; trying another", "service_id", svc.ServiceID, "vmid", vmid)
			skip[vmid] = true
			if rerr := models.ReleaseVMID(ctx, s.db.Gorm, svc.ServiceID); rerr != nil {
				return rerr
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	g := modules.Guest{Client: cl.Client, Cluster: cl.Name, Node: node, VMID: vmid, ServiceID: svc.ServiceID}
	res.VMID, res.Node, res.Adopted = &vmid, node, adopted
	if adopted {
		if err := enter("create"); err != nil {
			return err
		}
		if err := mod.Configure(ctx, g, spec, rep); err != nil {
			return err
		}
	}
	if err := enter("start"); err != nil {
		return err
	}
	if err := mod.Start(ctx, g, rep); err != nil {
		return err
	}
	if err := enter("verify"); err != nil {
		return err
	}
	in, err := mod.Inspect(ctx, g)
	if err != nil {
		return err
	}
	if !in.Exists || !in.Stamped || !in.Running {
		return fmt.Errorf("guest %d does not read back running with its stamp", vmid)
	}
	return models.UpdateService(ctx, s.db.Gorm, svc.ServiceID, map[string]any{"state": models.ServiceActive, "node": node})
}

// setState records a service state after an operation, outside the operation's context (which
// may be cancelled by then).
func (s *Service) setState(serviceID, state string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := models.UpdateService(ctx, s.db.Gorm, serviceID, map[string]any{"state": state}); err != nil {
		s.log.Error("record service state", "service_id", serviceID, "state", state, "err", err)
	}
}
