package executor_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
)

// R26 with several replicas: a root password lives only in the memory of the replica that
// accepted the request, so the operation is pinned to that replica's workers. Another replica
// does not claim it while the pin holds (it would have no password and fail the create); once
// the pin expires (the accepting replica died), it does.
func TestOperationWithSecretsIsPinnedToItsReplica(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		lease := time.Minute
		holder := executor.New(db, executor.Config{Owner: "accepting", Lease: lease}, quiet, executor.NewMetrics(prometheus.NewRegistry()))
		holder.Secrets().Put("op-pinned", map[string]string{"password": "pinned-pass-1234"})
		op := &models.Operation{ID: "op-pinned", ServiceID: "svc-pinned", ClientID: "c", Action: "replace", Payload: "{}"}
		holder.Secrets().Pin(op)
		if err := db.InsertOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		claim, err := db.ClaimNext(ctx, "other", lease)
		if err != nil {
			t.Fatal(err)
		}
		if claim != nil {
			t.Fatal("another replica claimed an operation pinned to the replica holding its secrets")
		}
		dbtest.ExpireLease(t, db, "op-pinned") // the pin is the lease: it expires, moved into the past
		claim, err = db.ClaimNext(ctx, "other", lease)
		if err != nil {
			t.Fatal(err)
		}
		if claim == nil || claim.Op.ID != "op-pinned" || claim.TakeOver {
			t.Fatalf("after the pin expired: %+v", claim)
		}
		// The accepting replica itself claims a pinned row at once.
		op2 := &models.Operation{ID: "op-pinned-2", ServiceID: "svc-pinned-2", ClientID: "c", Action: "replace", Payload: "{}"}
		holder.Secrets().Pin(op2)
		if err := db.InsertOperation(ctx, op2); err != nil {
			t.Fatal(err)
		}
		claim, err = db.ClaimNext(ctx, "accepting", lease)
		if err != nil {
			t.Fatal(err)
		}
		if claim == nil || claim.Op.ID != "op-pinned-2" {
			t.Fatalf("the accepting replica did not claim its pinned operation: %+v", claim)
		}
	})
}
