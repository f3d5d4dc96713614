package reinstall_test

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/reinstall"
	"pvebill/modules/stack/stacktest/poll"
)

// R29: many concurrent readers advance an intent; each transition happens exactly once (the
// generation counts them), and no reader returns a row older than one already returned when
// its read began — the loser of a swap returns the winner's row. On both databases.
func TestAdvanceOnReadConcurrentReaders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		vmid := 5001
		if err := db.InsertService(ctx, &models.Service{ServiceID: "svc-cas", ClientID: client, Plan: "ct-8",
			GuestType: "container", Cluster: "default", VMID: &vmid, State: models.ServiceActive}); err != nil {
			t.Fatal(err)
		}
		in := &models.Intent{ServiceID: "svc-cas", ClientID: client, State: models.IntentPreviewPending, GuestType: "container",
			Cluster: "default", VMID: vmid, Plan: "ct-8", OS: "debian-12"}
		pop := &models.Operation{ServiceID: "svc-cas", ClientID: client, Action: reinstall.ActionPreview, Payload: "{}"}
		if err := db.InsertIntentOperation(ctx, in, pop); err != nil {
			t.Fatal(err)
		}
		svc := reinstall.New(reinstall.Options{DB: db})
		stateOf := map[int64]string{1: models.IntentPreviewPending, 2: models.IntentPreviewReady,
			3: models.IntentApplying, 4: models.IntentCompleted}

		var maxSeen atomic.Int64
		maxSeen.Store(1)
		var stop atomic.Bool
		var reads atomic.Int64
		var mu sync.Mutex
		var problems []string
		report := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			if len(problems) < 10 {
				problems = append(problems, s)
			}
		}
		var wg sync.WaitGroup
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for !stop.Load() {
					floor := maxSeen.Load()
					var got *models.Intent
					var err error
					if i%2 == 0 {
						got, err = svc.Advance(ctx, in.ID)
					} else {
						got, err = svc.Get(ctx, client, "svc-cas", "")
					}
					if err != nil {
						report("read: " + err.Error())
						return
					}
					reads.Add(1)
					if got.Generation < floor {
						report("returned an older row than one already returned")
					}
					if stateOf[got.Generation] != got.State {
						report("generation " + strconv.Itoa(int(got.Generation)) + " in state " + got.State)
					}
					for {
						cur := maxSeen.Load()
						if got.Generation <= cur || maxSeen.CompareAndSwap(cur, got.Generation) {
							break
						}
					}
				}
			}(i)
		}
		waitGen := func(g int64) {
			if !poll.Wait(10*time.Second, func() bool { return maxSeen.Load() >= g }) {
				t.Fatalf("generation %d never returned (max %d)", g, maxSeen.Load())
			}
		}
		waitReads := func(n int64) {
			from := reads.Load()
			poll.Until(t, 10*time.Second, "the readers to read again", func() bool { return reads.Load() >= from+n })
		}
		finish := func(state, result string) {
			claim, err := db.ClaimNext(ctx, "worker", time.Minute)
			if err != nil || claim == nil {
				t.Fatalf("claim: %v %v", claim, err)
			}
			waitReads(16) // readers see the running operation
			if err := db.Finish(ctx, claim.Op.ID, "worker", state, &result, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		waitReads(16)
		finish(models.OpSucceeded, `{"rootfs":{"current_bytes":8589934592,"current_display":"8 GiB","planned_bytes":8589934592,"planned_display":"8 GiB"},"mounts":[],"confirmations":[],"blockers":[]}`)
		waitGen(2)
		aop := &models.Operation{ServiceID: "svc-cas", ClientID: client, Action: reinstall.ActionApply, Payload: "{}"}
		if err := db.ApplyIntent(ctx, in.ID, 2, aop, `{"confirmations":[],"mounts":[]}`, &models.AuditEvent{Actor: client, ServiceID: "svc-cas", Event: "reinstall_applied"}); err != nil {
			t.Fatal(err)
		}
		waitGen(3)
		finish(models.OpSucceeded, `{"vmid":5001,"guest_existed":null}`)
		waitGen(4)
		waitReads(16)
		stop.Store(true)
		wg.Wait()
		for _, p := range problems {
			t.Error(p)
		}
		final, err := db.GetIntent(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if final.Generation != 4 || final.State != models.IntentCompleted {
			t.Fatalf("final %s gen %d", final.State, final.Generation)
		}
		// A second apply of the same intent loses its swap.
		again := &models.Operation{ServiceID: "svc-cas", ClientID: client, Action: reinstall.ActionApply, Payload: "{}"}
		if err := db.ApplyIntent(ctx, in.ID, 2, again, "{}", &models.AuditEvent{Actor: client, ServiceID: "svc-cas", Event: "x"}); !errors.Is(err, models.ErrIntentChanged) {
			t.Fatalf("stale apply: %v", err)
		}
	})
}
