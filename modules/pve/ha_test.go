package pve

import "testing"

func TestHAResourceID(t *testing.T) {
	if HAResourceID(HAContainer, 5001) != "ct:5001" || HAResourceID(HAVM, 300) != "vm:300" {
		t.Fatal(HAResourceID(HAContainer, 5001), HAResourceID(HAVM, 300))
	}
	if ep, _ := endpointTemplate("/cluster/ha/resources/ct:5001"); ep != "/cluster/ha/resources/{param}" {
		t.Fatalf("endpoint label %q carries the guest id", ep)
	}
}
