package server

import (
	"context"
	"net/http"

	"pvebill/models"
	"pvebill/modules/console"
	"pvebill/modules/ippool"
	"pvebill/modules/password"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/rdns"
	"pvebill/modules/reinstall"
)

// The services the route groups call, each as the small interface its handlers need: the
// server knows no flow's type, and a handler group's test may stand in for its service.

// Lifecycle is what the service routes and the admin guest list need (modules/provision).
type Lifecycle interface {
	Create(ctx context.Context, clientID string, req provision.CreateRequest) (op *models.Operation, created bool, err error)
	Get(ctx context.Context, clientID, serviceID string) (provision.ServiceView, error)
	List(ctx context.Context, clientID, after string, limit int) (provision.ServicePage, error)
	Suspend(ctx context.Context, clientID, serviceID string, req provision.SuspendRequest) (*models.Operation, error)
	Unsuspend(ctx context.Context, clientID, serviceID string) (*models.Operation, error)
	Terminate(ctx context.Context, clientID, serviceID string) (*models.Operation, error)
	ChangePlan(ctx context.Context, clientID, serviceID string, req provision.ChangePlanRequest) (*models.Operation, error)
	Guests(ctx context.Context) ([]provision.GuestView, error)
}

// Reinstall is what the reinstall, restore and admin reconcile routes need (modules/reinstall).
type Reinstall interface {
	Preview(ctx context.Context, clientID, serviceID string, req reinstall.PreviewRequest) (*models.Intent, *models.Operation, error)
	Apply(ctx context.Context, clientID, serviceID string, req reinstall.ApplyRequest) (*models.Operation, *models.Intent, error)
	Get(ctx context.Context, clientID, serviceID, intentID string) (*models.Intent, error)
	RestorePreview(ctx context.Context, clientID, serviceID string, req reinstall.RestorePreviewRequest) (*models.Intent, *models.Operation, error)
	ApplyRestore(ctx context.Context, clientID, serviceID string, req reinstall.RestoreApplyRequest) (*models.Operation, *models.Intent, error)
	GetRestore(ctx context.Context, clientID, serviceID, intentID string) (*models.Intent, error)
	Reconcile(ctx context.Context, actor string, k models.ServiceKey, req reinstall.ReconcileRequest) (*models.Service, error)
}

// Console is what the console routes need (modules/console, R41).
type Console interface {
	Issue(ctx context.Context, clientID, serviceID string, req console.Request, requestBase string) (*console.Issued, error)
	ServePage(w http.ResponseWriter, r *http.Request, token string)
	ServeSocket(w http.ResponseWriter, r *http.Request, token string)
	Close()
}

// Password is what the password route needs (modules/password, R56).
type Password interface {
	Change(ctx context.Context, clientID, serviceID string, req password.Request) (*models.Operation, error)
}

// RDNS is what the reverse DNS routes need (modules/rdns, R55).
type RDNS interface {
	List(ctx context.Context, k models.ServiceKey) ([]rdns.Record, error)
	Set(ctx context.Context, k models.ServiceKey, req rdns.SetRequest) ([]rdns.Record, error)
}

// IPPools is what the IP pool routes need (modules/ippool).
type IPPools interface {
	List(ctx context.Context) ([]ippool.Usage, error)
	Put(ctx context.Context, name string, spec ippool.Spec) (ippool.Usage, bool, error)
	Delete(ctx context.Context, name string) error
}

// Plans is what the plan routes need (modules/plans).
type Plans interface {
	List(ctx context.Context) ([]plans.Plan, error)
	Get(ctx context.Context, code string) (plans.Plan, error)
	Put(ctx context.Context, code string, spec plans.Spec) (plans.Plan, bool, error)
	Delete(ctx context.Context, code string) error
	Capabilities(p plans.Plan) map[plans.GuestType]plans.Set
}
