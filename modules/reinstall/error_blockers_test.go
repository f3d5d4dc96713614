package reinstall_test

import (
	"encoding/json"
	"testing"

	"pvebill/models"
)

// R25: an apply that the run's own check blocks leaves a failed intent whose error lists the
// blockers found, with their phrase, exactly as the operation's error does.
func TestIntentErrorListsBlockers(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-block", 5001, "ct-8", true, nil)
	in := e.preview("svc-block")
	e.hold("svc-block")
	op, err := e.apply("svc-block", in)
	if err != nil {
		t.Fatal(err)
	}
	must(e.sim.SetConfig(5001, "protection", "1"))
	e.release("svc-block")
	if done := e.wait(op); done.State != models.OpFailed {
		t.Fatalf("apply %s", done.State)
	}
	got := e.intent("svc-block")
	if got.State != models.IntentFailed {
		t.Fatalf("intent %s", got.State)
	}
	raw, err := json.Marshal(e.view(got).Error)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"blocked","detail":"The action is blocked; see the listed blockers.",` +
		`"blockers":[{"code":"protection_enabled","message":"Protection is enabled on the guest; Proxmox refuses to destroy it."}]}`
	if string(raw) != want {
		t.Fatalf("intent error\n%s\nwant\n%s", raw, want)
	}
}
