package reinstall

import "testing"

// R19: preserved is in the vocabulary, declared not offered; the kinds' labelling never
// produces it (modules/lxc, modules/qemu).
func TestPreservedInTheVocabularyNotOffered(t *testing.T) {
	if Offered(Preserved) {
		t.Fatal("preserved is offered")
	}
	for _, l := range []DataLabel{Erased, Excluded, Untouched, Unknown} {
		if !Offered(l) {
			t.Errorf("%s not offered", l)
		}
	}
	found := false
	for _, l := range DataLabels {
		found = found || l == Preserved
	}
	if !found {
		t.Fatal("preserved missing from the vocabulary")
	}
}
