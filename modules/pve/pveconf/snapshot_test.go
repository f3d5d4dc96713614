package pveconf

import (
	"strings"
	"testing"
)

// R44: a snapshot's name is checked against Proxmox's rules.
func TestValidSnapshotName(t *testing.T) {
	for name, want := range map[string]bool{
		"before_upgrade": true, "Daily-1": true, "ab": true, strings.Repeat("a", 40): true,
		"a": false, "1st": false, "_x": false, "has space": false, "dot.ted": false, "": false,
		strings.Repeat("a", 41): false, "current": false, "pending": false, "PENDING": false, "Current": true,
	} {
		if got := ValidSnapshotName(name); got != want {
			t.Errorf("ValidSnapshotName(%q) = %v, want %v", name, got, want)
		}
	}
}
