package operation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// ActionTerminate is the one action a service without a guest still accepts (Guests.Enqueue).
const ActionTerminate = "terminate"

// Guests is what every flow does first with a service: read it as the client may see it, queue
// an operation for it, and find its guest — located at its vmid and of its kind, and, for a
// change, inspected and carrying the service's stamp (R39).
type Guests struct {
	db       *models.DB
	mods     *kinds.Registry
	clusters Clusters
	log      *slog.Logger
}

// NewGuests builds the lookup over the configured clusters and the registered kinds.
func NewGuests(db *models.DB, mods *kinds.Registry, clusters []kinds.Cluster, log *slog.Logger) *Guests {
	return &Guests{db: db, mods: mods, clusters: NewClusters(clusters), log: log}
}

// Target is a service's guest as a flow acts on it: its cluster, its kind's module, the guest,
// the cluster listing's row of it and, once inspected, what Proxmox says of it.
type Target struct {
	Svc     *models.Service
	Cluster kinds.Cluster
	Mod     kinds.Module
	Guest   kinds.Guest
	Listed  kinds.Located
	In      kinds.Inspection
}

// Module is the registered module of a guest type; a kind this build lacks is not available.
func (g *Guests) Module(guestType string) (kinds.Module, error) {
	m, ok := g.mods.Get(plans.GuestType(guestType))
	if !ok {
		return nil, NotAvailable()
	}
	return m, nil
}

// Cluster is the configured cluster of that name (an unknown one is not_found).
func (g *Guests) Cluster(name string) (kinds.Cluster, error) { return g.clusters.Get(name) }

// Service reads a service the client may see (another client's is not found).
func (g *Guests) Service(ctx context.Context, clientID, serviceID string) (*models.Service, error) {
	svc, err := g.db.GetClientService(ctx, clientID, serviceID)
	return svc, ServiceNotFound(err)
}

// ServiceNotFound turns a missing service (or another client's) into the API's 404.
func ServiceNotFound(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	return err
}

// Enqueue writes an operation for an existing service. A service awaiting reconciliation
// refuses everything (R28); one without a guest (terminated, or a failed create) refuses all
// but terminate.
func (g *Guests) Enqueue(ctx context.Context, clientID, serviceID, action string, payload any) (*models.Operation, error) {
	svc, err := g.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	return g.EnqueueFor(ctx, svc, action, payload)
}

// EnqueueFor is Enqueue for a service the flow has read already (Service).
func (g *Guests) EnqueueFor(ctx context.Context, svc *models.Service, action string, payload any) (*models.Operation, error) {
	if svc.State == models.ServiceNeedsReconciliation {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	}
	if action != ActionTerminate && (svc.State == models.ServiceTerminated || svc.State == models.ServiceFailed) {
		return nil, Missing()
	}
	raw, _ := json.Marshal(payload)
	op := &models.Operation{ServiceID: svc.ServiceID, ClientID: svc.ClientID, Action: action, Payload: string(raw)}
	if err := g.db.InsertOperation(ctx, op); err != nil {
		return nil, fmt.Errorf("write %s operation: %w", action, err)
	}
	return op, nil
}

// Inspect is the service's guest, checked: found at its vmid, of the service's kind and
// carrying the service's stamp (R39), its node recorded where it was found. Anything else
// refuses before a single change is sent.
func (g *Guests) Inspect(ctx context.Context, svc *models.Service) (*Target, error) {
	t, err := g.Locate(ctx, svc)
	if err != nil {
		return nil, err
	}
	if t.In, err = t.Mod.Inspect(ctx, t.Guest); err != nil {
		return nil, err
	}
	if !t.In.Exists {
		return nil, Missing()
	}
	if !t.In.Stamped {
		g.log.Warn("guest at the service's vmid does not carry its stamp; refusing", "service_id", svc.ServiceID,
			"cluster", t.Cluster.Name, "vmid", *svc.VMID)
		return nil, NotOurs(*svc.VMID)
	}
	if t.Guest.Node != svc.Node {
		if err := g.db.UpdateService(ctx, svc.Key(), map[string]any{"node": t.Guest.Node}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// CheckedGuest is Inspect for a flow that needs only the module and the guest.
func (g *Guests) CheckedGuest(ctx context.Context, svc *models.Service) (kinds.Module, kinds.Guest, error) {
	t, err := g.Inspect(ctx, svc)
	if err != nil {
		return nil, kinds.Guest{}, err
	}
	return t.Mod, t.Guest, nil
}

// Locate finds the service's guest (its cluster, kind module and node) without inspecting it:
// found at its vmid and of the service's kind; the stamp is Inspect's check, or the kind's.
func (g *Guests) Locate(ctx context.Context, svc *models.Service) (*Target, error) {
	if svc.VMID == nil {
		return nil, Missing()
	}
	cl, err := g.clusters.Get(svc.Cluster)
	if err != nil {
		return nil, err
	}
	mod, err := g.Module(svc.GuestType)
	if err != nil {
		return nil, err
	}
	at, err := g.mods.Locate(ctx, cl, *svc.VMID)
	if err != nil {
		return nil, err
	}
	if !at.Found {
		return nil, Missing()
	}
	if at.Kind != plans.GuestType(svc.GuestType) {
		return nil, NotOurs(*svc.VMID)
	}
	return &Target{Svc: svc, Cluster: cl, Mod: mod, Guest: ServiceGuest(cl, svc, at.Node), Listed: at}, nil
}

// Facts reads the facts of the service's guest at its vmid for op (R58).
func (g *Guests) Facts(ctx context.Context, svc *models.Service, op *models.Operation) (executor.Facts, error) {
	cl, err := g.clusters.Get(svc.Cluster)
	if err != nil {
		return executor.Facts{}, err
	}
	f, _, err := ReadFacts(ctx, g.mods, cl, ServiceGuest(cl, svc, svc.Node), op)
	return f, err
}

// ServiceGuest is the service's guest (its vmid and stamp) on node of cluster cl.
func ServiceGuest(cl kinds.Cluster, svc *models.Service, node string) kinds.Guest {
	return kinds.Guest{Client: cl.Client, Cluster: cl.Name, Node: node, VMID: *svc.VMID, ClientID: svc.ClientID,
		ServiceID: svc.ServiceID, LegacyStamp: svc.LegacyStamp}
}

// Protection says whether Proxmox's protection flag blocks an operation.
type Protection bool

// The two rules of protection.
const (
	ProtectionBlocks  Protection = true  // the operation destroys the guest
	ProtectionIgnored Protection = false // the guest survives the operation
)

// LockBlockers are the refusals of a guest that is locked in Proxmox, or protected where
// protection blocks the operation.
func LockBlockers(in kinds.Inspection, protection Protection) []i18n.Blocker {
	var out []i18n.Blocker
	if protection == ProtectionBlocks && in.Protected {
		out = append(out, ProtectionEnabled.Blocker(nil))
	}
	if in.Lock != "" {
		out = append(out, ProxmoxLock.Blocker(map[string]string{"lock": in.Lock}))
	}
	return out
}
