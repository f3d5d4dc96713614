package reinstall

import "testing"

// R27: one ordered stage list; "destructive" comes from the executor's Action.Destructive and
// the position of destroy in the list, nowhere else.
func TestStagesDestructiveFromPosition(t *testing.T) {
	s := New(Options{})
	var apply, preview bool
	for _, a := range s.Actions() {
		switch a.Name {
		case ActionApply:
			apply = true
			if a.Irreversible != IrreversibleStage {
				t.Fatalf("irreversible stage %q", a.Irreversible)
			}
			want := map[string]bool{"precheck": false, "stop": false, "destroy": true, "create": true,
				"configure": true, "start": true, "verify": true}
			if len(a.Stages) != len(want) {
				t.Fatalf("stages %v", a.Stages)
			}
			for i, st := range a.Stages {
				if a.Destructive(i) != want[string(st)] {
					t.Errorf("stage %s destructive %v", st, a.Destructive(i))
				}
			}
		case ActionPreview:
			preview = true
			for i := range a.Stages {
				if a.Destructive(i) {
					t.Errorf("preview stage %s destructive", a.Stages[i])
				}
			}
		}
	}
	if !apply || !preview {
		t.Fatal("actions missing")
	}
}
