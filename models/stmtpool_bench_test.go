package models_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The webhook path's statements on MariaDB, with and without the statement pool. One op is one
// create webhook's database work: reserve the idempotency key, read the plan, insert the service
// and its operation in one transaction, read the service back, store the answer. The two
// databases take turns (a block of ops on one, then the same on the other), so that load from
// elsewhere on the machine falls on both alike; the metrics are the medians over the blocks of
// each side's time per op. Run with PVEBILL_TEST_MYSQL_DSN set:
//
//	go test -run '^$' -bench WebhookStatements -benchtime 400x ./models
func BenchmarkWebhookStatements(b *testing.B) {
	if os.Getenv("PVEBILL_TEST_MYSQL_DSN") == "" {
		b.Skip("PVEBILL_TEST_MYSQL_DSN not set: the pool is for MariaDB")
	}
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchWebhook(b, workers) })
	}
}

// webhookDB runs the webhook path's statements on one database.
type webhookDB struct {
	db  *models.DB
	seq atomic.Int64
}

func newWebhookDB(b *testing.B, pool bool) *webhookDB {
	w := &webhookDB{db: dbtest.Open(b, models.MySQL)}
	if !pool {
		models.WithoutStatementPoolForTest(w.db)
	}
	if _, err := models.SavePlan(b.Context(), w.db.Gorm, "p", "api", `{"code":"p"}`); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *webhookDB) op(ctx context.Context) error {
	db := w.db
	id := fmt.Sprintf("svc-%d", w.seq.Add(1))
	if _, err := db.ReserveIdempotencyKey(ctx, "whmcs", id, "h", models.IdempotencyPendingTTL); err != nil {
		return err
	}
	if _, err := models.GetPlan(ctx, db.Gorm, "p"); err != nil {
		return err
	}
	svc := &models.Service{ServiceID: id, ClientID: "whmcs", Plan: "p", GuestType: "container", Cluster: "default",
		State: models.ServiceProvisioning, ParamsHash: "h"}
	err := db.CreateServiceOperation(ctx, svc, &models.Operation{ServiceID: id, ClientID: "whmcs", Action: "create", Payload: "{}"})
	if err != nil {
		return err
	}
	if _, err := models.GetService(ctx, db.Gorm, models.ServiceKey{ClientID: "c", ServiceID: id}); err != nil {
		return err
	}
	return db.CompleteIdempotencyKey(ctx, "whmcs", id, 202, "application/json", "", []byte(`{}`), models.IdempotencyPendingTTL)
}

// block runs n ops on workers goroutines and returns the time per op.
func (w *webhookDB) block(ctx context.Context, n, workers int) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := w.op(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return time.Since(start) / time.Duration(n), <-errs
}

func benchWebhook(b *testing.B, workers int) {
	ctx := b.Context()
	sides := []*webhookDB{newWebhookDB(b, true), newWebhookDB(b, false)}
	// Warm up: the pool prepares a statement in the background after its first run.
	for _, w := range sides {
		if _, err := w.block(ctx, 20, workers); err != nil {
			b.Fatal(err)
		}
	}
	const per = 10
	var times [2][]time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += 2 * per {
		for i, w := range sides {
			d, err := w.block(ctx, per, workers)
			if err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], d)
		}
	}
	b.StopTimer()
	for i, name := range []string{"pool-ms/op", "nopool-ms/op"} {
		slices.Sort(times[i])
		b.ReportMetric(float64(times[i][len(times[i])/2])/1e6, name)
	}
}
