package callbacks_test

import (
	"encoding/json"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R25: the event of an operation that ended blocked lists the blockers its run found, as the
// operation's error does.
func TestEventListsBlockers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		rcv := newReceiver(t, 0)
		op := finishedOp(t, db, clientID, "whmcs-1", "terminate", models.OpFailed)
		dbtest.Exec(t, db, "UPDATE operations SET error_code = ?, error_blockers = ?, updated_at = ? WHERE id = ?",
			"blocked", `[{"code":"proxmox_lock","params":{"lock":"backup"}}]`, models.Now(), op.ID)
		d := newDispatcher(db, rcv.url(), nil, "a", nil)
		if n, err := d.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("sweep wrote %d, %v", n, err)
		}
		if sent, err := d.DeliverDue(ctx); err != nil || sent != 1 {
			t.Fatalf("delivered %d, %v", sent, err)
		}
		for id := range rcv.accepted() {
			raw, err := json.Marshal(rcv.events[id].Operation.Error.Blockers)
			if err != nil {
				t.Fatal(err)
			}
			want := `[{"code":"proxmox_lock","message":"The guest is locked in Proxmox (backup)."}]`
			if string(raw) != want {
				t.Fatalf("blockers %s, want %s", raw, want)
			}
			return
		}
		t.Fatal("no event accepted")
	})
}
