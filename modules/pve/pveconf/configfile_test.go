package pveconf_test

import (
	"reflect"
	"testing"

	"pvebill/modules/pve/pveconf"
)

func TestParseConfigFile(t *testing.T) {
	text := "#pvebill:c1:svc-1\n#second line\nboot: order=scsi0\ncores: 2\n" +
		"scsi0: local-lvm:vm-100-disk-0,size=10G \nide2: local-lvm:vm-100-cloudinit,media=cdrom\n" +
		"not a config line\n\n[PENDING]\nscsi1: local-lvm:vm-100-disk-1,size=1G\n[snap1]\nscsi2: x\n"
	want := map[string]string{"boot": "order=scsi0", "cores": "2", "scsi0": "local-lvm:vm-100-disk-0,size=10G",
		"ide2": "local-lvm:vm-100-cloudinit,media=cdrom"}
	if got := pveconf.ParseConfigFile(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseConfigFile = %v, want %v", got, want)
	}
	if got := pveconf.ParseConfigFile(""); len(got) != 0 {
		t.Fatalf("empty file = %v", got)
	}
}
