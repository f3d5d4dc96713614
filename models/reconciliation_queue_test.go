package models_test

import (
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R28: an operation that ends needs_reconciliation keeps its service's lock closed, so what was
// queued behind it can never run: it fails at once as service_locked (the refusal a new request
// for that service gets), while other services' operations stay queued.
func TestReconciliationFailsWhatIsQueuedBehindIt(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		g := db.Gorm.WithContext(ctx)
		for _, id := range []string{"svc-a", "svc-b"} {
			s := &models.Service{ServiceID: id, ClientID: "c", Plan: "p", GuestType: "container", Cluster: "c", State: models.ServiceActive}
			if err := models.InsertService(ctx, g, s); err != nil {
				t.Fatal(err)
			}
		}
		ops := map[string]*models.Operation{}
		created := models.Now().Add(-time.Minute)
		for i, k := range []struct{ name, svc, action string }{
			{"running", "svc-a", "reinstall_apply"}, {"behind", "svc-a", "start"}, {"other", "svc-b", "start"},
		} {
			op := &models.Operation{ServiceID: k.svc, ClientID: "c", Action: k.action, Payload: "{}"}
			if err := models.InsertOperation(ctx, g, op); err != nil {
				t.Fatal(err)
			}
			// Claims take the oldest first: the order of creation is written, not waited for.
			if err := g.Model(op).Update("created_at", created.Add(time.Duration(i)*time.Second)).Error; err != nil {
				t.Fatal(err)
			}
			ops[k.name] = op
		}
		c, err := db.ClaimNext(ctx, "w", time.Minute)
		if err != nil || c == nil || c.Op.ID != ops["running"].ID {
			t.Fatalf("claim = %+v, %v; want the first operation", c, err)
		}
		if err := db.Finish(ctx, c.Op.ID, "w", models.OpNeedsReconciliation, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		read := func(id string) models.Operation {
			var op models.Operation
			if err := g.Where("id = ?", id).Take(&op).Error; err != nil {
				t.Fatal(err)
			}
			return op
		}
		behind := read(ops["behind"].ID)
		if behind.State != models.OpFailed || behind.ErrorCode == nil || *behind.ErrorCode != "service_locked" ||
			behind.ErrorDetail == nil || *behind.ErrorDetail == "" || behind.FinishedAt == nil {
			t.Fatalf("operation queued behind the reconciliation: %+v", behind)
		}
		if other := read(ops["other"].ID); other.State != models.OpQueued {
			t.Fatalf("another service's operation is %s, want queued", other.State)
		}
		var svc models.Service
		if err := g.Where("service_id = ?", "svc-a").Take(&svc).Error; err != nil {
			t.Fatal(err)
		}
		if svc.State != models.ServiceNeedsReconciliation || svc.LockOperationID == nil || *svc.LockOperationID != ops["running"].ID {
			t.Fatalf("service after the reconciliation: state %s, lock %v", svc.State, svc.LockOperationID)
		}
	})
}
