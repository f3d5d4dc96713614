package reinstall_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pvebill/models"
	"pvebill/modules/reinstall"
)

// everyForm is a container config with a mount of every form (R19–R21).
var everyForm = map[string]string{
	"rootfs":  "local-lvm:vm-5001-disk-0,size=8G",
	"mp0":     "/srv/shared,mp=/mnt/shared",
	"mp1":     "local-lvm:vm-6002-disk-1,mp=/data",
	"mp2":     "local:5001/vm-5001-disk-2.raw,mp=/dir,backup=1,size=2G",
	"mp3":     "local-zfs:subvol-5001-disk-3,mp=/zfs,size=1G",
	"mp4":     "/dev/sdb1,mp=/mnt/disk",
	"mp5":     "local-zfs:base-100-disk-0/subvol-5001-disk-5,mp=/clone,size=1G",
	"unused0": "local-lvm:vm-5001-disk-9",
	"unused1": "local-lvm:vm-7003-disk-0",
}

// R18–R21: the preview labels every form and sends nothing but GET requests.
func TestPreviewLabelsEveryFormAndOnlyReads(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-forms", 5001, "ct-8", true, everyForm)
	if err := e.sim.SetConfig(5001, "mp6", "local-lvm:not-a-volume-name,mp=/junk"); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetLog()
	in := e.preview("svc-forms")
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("phase 1 sent %s %s", r.Method, r.Path)
		}
	}
	if in.State != models.IntentPreviewReady || in.Generation != 2 {
		t.Fatalf("intent %s gen %d", in.State, in.Generation)
	}
	v := e.view(in)
	var got []string
	for _, m := range v.Mounts {
		owner := "null"
		if m.OwnerVMID != nil {
			owner = fmt.Sprint(*m.OwnerVMID)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s", m.Key, m.Volume, owner, m.Data, m.MountAfter))
	}
	want := []string{
		"rootfs local-lvm:vm-5001-disk-0 5001 erased recreated",
		"mp0 /srv/shared null untouched removed",
		"mp1 local-lvm:vm-6002-disk-1 6002 excluded removed",
		"mp2 local:5001/vm-5001-disk-2.raw 5001 erased removed",
		"mp3 local-zfs:subvol-5001-disk-3 5001 erased removed",
		"mp4 /dev/sdb1 null untouched removed",
		"mp5 local-zfs:base-100-disk-0/subvol-5001-disk-5 5001 erased removed",
		"mp6 local-lvm:not-a-volume-name null unknown removed",
		"unused0 local-lvm:vm-5001-disk-9 5001 erased removed",
		"unused1 local-lvm:vm-7003-disk-0 7003 excluded removed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mounts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(v.Confirmations) != len(want) || v.Confirmations[1] != (reinstall.Confirmation{Key: "mp0", Volume: "/srv/shared"}) {
		t.Fatalf("confirmations %+v", v.Confirmations)
	}
	if len(v.Blockers) != 1 || v.Blockers[0].Code != reinstall.MountUnclassifiable || !strings.Contains(v.Blockers[0].Message, "mp6") {
		t.Fatalf("blockers %+v", v.Blockers)
	}
	if v.Rootfs == nil || v.Rootfs.CurrentBytes == nil || *v.Rootfs.CurrentBytes != 8<<30 || v.Rootfs.PlannedDisplay != "8 GiB" {
		t.Fatalf("rootfs %+v", v.Rootfs)
	}
	// The label is shown but never part of a confirmation.
	raw, _ := json.Marshal(v.Confirmations)
	if strings.Contains(string(raw), "erased") || strings.Contains(string(raw), "data") {
		t.Fatalf("confirmations carry labels: %s", raw)
	}
}

// R19: Proxmox's destroy walks the pending section too, so it is labelled and confirmed.
func TestPreviewLabelsPending(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-pend", 5002, "ct-8", true, map[string]string{"mp0": "local-lvm:vm-5002-disk-1,mp=/a"},
		map[string]string{"mp0": "local-lvm:vm-6002-disk-4,mp=/a", "mp1": "local-lvm:vm-5002-disk-2,mp=/b"})
	v := e.view(e.preview("svc-pend"))
	var got []string
	for _, m := range v.Mounts {
		got = append(got, fmt.Sprintf("%s=%s:%s:%v", m.Key, m.Volume, m.Data, m.Pending))
	}
	want := "rootfs=local-lvm:vm-5002-disk-0:erased:false mp0=local-lvm:vm-5002-disk-1:erased:false " +
		"mp0=local-lvm:vm-6002-disk-4:excluded:true mp1=local-lvm:vm-5002-disk-2:erased:true"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
