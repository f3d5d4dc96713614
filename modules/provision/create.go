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

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// CreateRequest is the body of POST /v1/services (docs/api.md Create). The root password and the
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
func (s *Provisioner) Create(ctx context.Context, clientID string, req CreateRequest) (op *models.Operation, created bool, err error) {
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
	mod, err := s.guests.Module(string(kind))
	if err != nil {
		return nil, false, err
	}
	if err := mod.CheckOS(plan, req.OS); err != nil {
		return nil, false, err
	}
	if _, err := s.clusters.Get(plan.Cluster); err != nil {
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
	return s.repeatCreate(ctx, clientID, req.ServiceID, hash, string(raw), secrets)
}

// repeatCreate answers a create for a service_id the client has already (R36): the same
// parameters get the existing create operation — or, when that create failed, a new one that
// adopts whatever the failed one left (R39); anything else is 409 service_exists.
func (s *Provisioner) repeatCreate(ctx context.Context, clientID, serviceID, hash, raw string,
	secrets map[string]string) (*models.Operation, bool, error) {
	// The key is the client's: another client's service of the same id is not a repeat (R46).
	key := models.ServiceKey{ClientID: clientID, ServiceID: serviceID}
	existing, err := s.db.GetService(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("read service %s: %w", serviceID, err)
	}
	if existing.ParamsHash != hash {
		return nil, false, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceExists).Perm(i18n.Permanent)
	}
	last, err := s.db.LatestOperation(ctx, key, ActionCreate)
	if err != nil {
		return nil, false, err
	}
	if existing.State != models.ServiceFailed || last.State != models.OpFailed || existing.LockOperationID != nil {
		return last, false, nil
	}
	// The previous create failed: a new one adopts what it left (R36, R39).
	if err := s.db.UpdateService(ctx, key, map[string]any{"state": models.ServiceProvisioning}); err != nil {
		return nil, false, err
	}
	op := &models.Operation{ID: models.NewID(), ServiceID: serviceID, ClientID: clientID, Action: ActionCreate, Payload: raw}
	s.secrets.Put(op.ID, secrets)
	s.secrets.Pin(op)
	if err := s.db.InsertOperation(ctx, op); err != nil {
		s.secrets.Drop(op.ID)
		return nil, false, fmt.Errorf("write create operation: %w", err)
	}
	return op, true, nil
}

// creation is one run of a create: what each stage found, for the stages after it.
type creation struct {
	s       *Provisioner
	r       *executor.Run
	p       createPayload
	res     *result
	rep     *operation.Reporter
	svc     *models.Service
	plan    plans.Plan
	mod     kinds.Module
	cl      kinds.Cluster
	spec    kinds.CreateSpec
	node    string
	vmid    int
	adopted bool
	// skip are the vmids found taken (by a guest not ours, or at create).
	skip map[int]bool
}

// createSteps is the create's stage list: place the guest and allocate its address, allocate a
// vmid (or adopt the guest an earlier attempt made), create, start, verify.
var createSteps = []executor.Step[*creation]{
	{Stage: StagePlace, Run: place},
	{Stage: StageAllocate, Run: allocate},
	{Stage: StageCreate, Run: createGuest},
	{Stage: StageStart, Run: startCreated},
	{Stage: StageVerify, Run: verifyCreated},
}

// runCreate places, allocates, creates, starts and verifies a guest. A service that already has
// a vmid (a retried create) first looks there: a guest carrying this service's stamp is adopted
// instead of making a second one.
func (s *Provisioner) runCreate(ctx context.Context, r *executor.Run) (err error) {
	c := &creation{s: s, r: r, res: &result{}, rep: &operation.Reporter{}, skip: map[int]bool{}}
	if err := r.Payload(&c.p); err != nil {
		return err
	}
	defer func() {
		c.res.Warnings = c.rep.Warnings
		if err != nil {
			c.res.Fail(r.Op.Stage, err)
			// A lost lease belongs to another worker now, and a shutdown gives the operation
			// back to the queue: neither is the create's failure.
			if !errors.Is(err, models.ErrLeaseLost) && ctx.Err() == nil {
				operation.SetState(s.db, s.log, r.Op.Key(), models.ServiceFailed)
			}
			err = operation.ProblemOf(err)
		}
		r.SetResult(c.res)
	}()
	if err := c.prepare(ctx); err != nil {
		return err
	}
	return executor.RunSteps(ctx, r, createSteps, c)
}

// prepare reads what the stages need: the service, its plan, the kind's module, the cluster and
// the transient secrets.
func (c *creation) prepare(ctx context.Context) error {
	var err error
	if c.svc, err = c.s.db.GetService(ctx, c.r.Op.Key()); err != nil {
		return err
	}
	if c.plan, err = c.s.plans.Get(ctx, c.p.Plan); err != nil {
		return err
	}
	if c.mod, err = c.s.guests.Module(c.p.GuestType); err != nil {
		return err
	}
	if c.cl, err = c.s.clusters.Get(c.plan.Cluster); err != nil {
		return err
	}
	password, _ := c.r.Secret(secretPassword)
	keys, _ := c.r.Secret(secretSSHKeys)
	if password == "" && keys == "" {
		// The secrets lived in the memory of a process that is gone: ask for the create again.
		return operation.Interrupted()
	}
	c.spec = kinds.CreateSpec{Plan: c.plan, OS: c.p.OS, Hostname: c.p.Hostname, Password: password}
	if keys != "" {
		c.spec.SSHKeys = strings.Split(keys, "\n")
	}
	return nil
}

func (c *creation) guest() kinds.Guest {
	return kinds.Guest{Client: c.cl.Client, Cluster: c.cl.Name, Node: c.node, VMID: c.vmid,
		ClientID: c.svc.ClientID, ServiceID: c.svc.ServiceID, LegacyStamp: c.svc.LegacyStamp}
}

// place picks the node (R52; for a kind that clones, among the nodes a template serves, and the
// template it clones from there) and allocates the service's static address when the plan names
// a pool.
func place(ctx context.Context, c *creation) error {
	var serves map[string]bool
	var srcs map[string]kinds.TemplateSource
	if cloner, ok := c.mod.(kinds.Cloner); ok {
		var err error
		if srcs, err = c.s.templateSources(ctx, c.cl, cloner, c.mod, c.plan, c.p.OS); err != nil {
			return err
		}
		serves = make(map[string]bool, len(srcs))
		for n := range srcs {
			serves[n] = true
		}
	}
	var err error
	if c.node, err = c.s.place.Place(ctx, c.cl, c.plan, c.svc.Key(), serves); err != nil {
		return err
	}
	if t, ok := srcs[c.node]; ok {
		c.spec.Template = &t
	}
	if c.plan.IPPool == nil && c.plan.IP6Pool == nil {
		return nil
	}
	if c.s.addrs == nil {
		return operation.NotAvailable().
			Wrap(fmt.Errorf("plan %s names an ip pool but no address pools are configured", c.plan.Code))
	}
	a, err := kinds.PlanAddress(ctx, c.plan, func(ctx context.Context, pool string) (kinds.Address, error) {
		return c.s.addrs.Allocate(ctx, pool, c.svc.Key())
	})
	if err != nil {
		return fmt.Errorf("allocate address: %w", err)
	}
	c.spec.Address = a
	return nil
}

// allocate adopts the guest an earlier attempt made at the service's vmid, if it carries the
// service's stamp (R36, R39); otherwise it releases that vmid and reserves a free one (R2).
func allocate(ctx context.Context, c *creation) error {
	if c.svc.VMID != nil {
		if err := c.adopt(ctx, *c.svc.VMID); err != nil || c.adopted {
			return err
		}
		if err := c.s.db.ReleaseVMID(ctx, c.svc.Key()); err != nil {
			return err
		}
	}
	return c.reserve(ctx)
}

// adopt looks at vmid, the vmid of a retried create: is the guest it made already there?
func (c *creation) adopt(ctx context.Context, vmid int) error {
	at, err := c.s.mods.Locate(ctx, c.cl, vmid)
	if err != nil || !at.Found {
		return err
	}
	if at.Kind == c.mod.Kind() {
		g := c.guest()
		g.Node, g.VMID = at.Node, vmid
		in, err := c.mod.Inspect(ctx, g)
		if err != nil {
			return err
		}
		c.adopted = in.Exists && in.Stamped
	}
	if !c.adopted {
		c.skip[vmid] = true
		return nil
	}
	c.vmid, c.node = vmid, at.Node
	c.s.log.Info("create adopts the guest an earlier attempt made", "service_id", c.svc.ServiceID, "vmid", vmid)
	return nil
}

// reserve reserves a free vmid for the service and records the chosen node.
func (c *creation) reserve(ctx context.Context) error {
	var err error
	if c.vmid, err = c.s.place.AllocateVMID(ctx, c.cl, c.svc.Key(), c.node, c.skip); err != nil {
		return err
	}
	return c.s.db.UpdateService(ctx, c.svc.Key(), map[string]any{"node": c.node})
}

// createGuest makes the guest (configures an adopted one). A vmid taken between the check and
// the create is skipped for another (R2), up to the provisioner's attempts.
func createGuest(ctx context.Context, c *creation) error {
	if c.adopted {
		c.setResult()
		return c.mod.Configure(ctx, c.guest(), c.spec, c.rep)
	}
	for tries := 1; ; tries++ {
		err := c.mod.Create(ctx, c.guest(), c.spec, c.rep)
		if !errors.Is(err, kinds.ErrAlreadyExists) {
			if err == nil {
				c.setResult()
			}
			return err
		}
		// Somebody took the id between the check and the create: pick another (R2).
		c.s.log.Warn("vmid taken at create; trying another", "service_id", c.svc.ServiceID, "vmid", c.vmid)
		c.skip[c.vmid] = true
		if err := c.s.db.ReleaseVMID(ctx, c.svc.Key()); err != nil {
			return err
		}
		if tries >= c.s.place.VMIDAttempts() {
			return operation.Unavailable(fmt.Errorf("vmids kept being taken on %s", c.cl.Name))
		}
		if err := c.reserve(ctx); err != nil {
			return err
		}
	}
}

func (c *creation) setResult() {
	vmid := c.vmid
	c.res.VMID, c.res.Node, c.res.Adopted = &vmid, c.node, c.adopted
}

func startCreated(ctx context.Context, c *creation) error {
	return c.mod.Start(ctx, c.guest(), c.rep)
}

func verifyCreated(ctx context.Context, c *creation) error {
	in, err := c.mod.Inspect(ctx, c.guest())
	if err != nil {
		return err
	}
	if !in.Exists || !in.Stamped || !in.Running {
		return fmt.Errorf("guest %d does not read back running with its stamp", c.vmid)
	}
	return c.s.db.UpdateService(ctx, c.svc.Key(), map[string]any{"state": models.ServiceActive, "node": c.node})
}

// templateSources are the nodes a template of the plan's catalog entry for os serves, each with
// the template it clones from (kinds.Cloner); none is os_not_offered, temporary (the templates
// may come back).
func (s *Provisioner) templateSources(ctx context.Context, cl kinds.Cluster, cloner kinds.Cloner, mod kinds.Module,
	p plans.Plan, os string) (map[string]kinds.TemplateSource, error) {
	srcs, err := cloner.TemplateSources(ctx, cl, p, os)
	if err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeOSNotOffered).Perm(i18n.Temporary).
			With("os", os).With("guest_type", string(mod.Kind())).
			Wrap(fmt.Errorf("no template of %s for plan %s on cluster %s", os, p.Code, cl.Name))
	}
	return srcs, nil
}
