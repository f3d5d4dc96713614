package plans_test

import (
	"context"
	"sync"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/plans"
)

// Several replicas start together and each imports the same plans_file: on MariaDB their
// transactions may deadlock on the same new rows, and the loser is retried instead of
// failing the replica's start.
func TestReplicasImportPlansFileTogether(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		specs := plans.Examples()
		for round := range 5 {
			if round > 0 {
				dbtest.Exec(t, db, "DELETE FROM plans")
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					svc := plans.NewService(db, plans.Options{})
					if _, err := svc.Import(context.Background(), specs, plans.SourceFile); err != nil {
						t.Errorf("round %d: %v", round, err)
					}
				}()
			}
			wg.Wait()
		}
	})
}
