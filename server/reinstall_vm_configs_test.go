package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pvebill/models/dbtest"
)

// vmConfig is one configuration of testdata/vmconfigs: its keys and the blockers its preview
// must show.
type vmConfig struct {
	name   string
	keys   [][2]string
	expect []string
}

// readVMConfigs reads every testdata/vmconfigs/*.conf, {vmid} replaced by vmid.
func readVMConfigs(t *testing.T, vmid int) []vmConfig {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "vmconfigs", "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no VM configurations: %v", err)
	}
	var out []vmConfig
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := vmConfig{name: strings.TrimSuffix(filepath.Base(f), ".conf")}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := strings.ReplaceAll(sc.Text(), "{vmid}", strconv.Itoa(vmid))
			if exp, ok := strings.CutPrefix(line, "# expect:"); ok {
				c.expect = strings.Fields(exp)
				continue
			}
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: line %q is not key: value", f, line)
			}
			c.keys = append(c.keys, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
		out = append(out, c)
	}
	return out
}

// vmDriveKey matches the keys a VM configuration's drives and boot order use.
var vmDriveKey = regexp.MustCompile(`^((ide|sata|scsi|virtio|efidisk|tpmstate|unused)\d+|boot|bootdisk)$`)

// R19, R24, R25, R30: a VM without a boot disk is not unclassifiable. Every configuration of
// testdata/vmconfigs (VMs with only an EFI disk or a TPM state, with no drive at all, with only CD
// drives, with a boot order naming a missing disk, and for contrast VMs with a boot disk) is
// installed on a service's VM in the simulator and previewed over HTTP. The preview shows
// exactly the blockers the configuration expects: no rootfs_size_unknown and no
// mount_unclassifiable where there is no boot disk, a mount_unclassifiable only for a disk it
// labels unknown (never for a key the config does not have), always a "disks" array (empty when
// the VM has no disk), and the preview sends nothing but GET requests to Proxmox.
func TestVMPreviewReplaysConfigs(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			check := openAPIChecker(t)
			id := "whmcs-vm-configs"
			base := "/v1/services/" + id
			r := h.billing("POST", "/v1/services?wait=20", createBody(id, "vm-2g"))
			succeeded(t, r)
			vmid := int(h.billing("GET", base, nil).json(t)["service"].(map[string]any)["vmid"].(float64))
			for _, c := range readVMConfigs(t, vmid) {
				t.Run(c.name, func(t *testing.T) {
					installVMConfig(t, h, vmid, c)
					mark := len(h.sim.Requests())
					r := h.billing("POST", base+"/reinstall/preview?wait=10", []byte(`{}`))
					check("POST", base+"/reinstall/preview", r, 200)
					for _, req := range h.sim.Requests()[mark:] {
						if req.Method != "GET" {
							t.Errorf("the preview sent %s %s", req.Method, req.Path)
						}
					}
					in := r.json(t)["intent"].(map[string]any)
					checkVMPreview(t, in, c)
					if c.name == "efi-secboot-and-tpm" {
						applyNoBootDisk(t, h, base, vmid, in)
					}
				})
			}
		})
	}
}

// applyNoBootDisk applies the preview of a VM without a boot disk: the apply's own checks agree
// with the preview's (no blocker), and the re-clone brings the template's boot disk back.
func applyNoBootDisk(t *testing.T, h *svcHarness, base string, vmid int, in map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"intent_id": in["id"], "root_password": reinstallPassword,
		"confirmations": in["confirmations"]})
	r := h.billing("POST", base+"/reinstall?wait=20", body)
	if op := succeeded(t, r); op["action"] != "reinstall" {
		t.Fatalf("operation %v", op)
	}
	g, ok := h.sim.Guest(vmid)
	if !ok || g.Config["scsi0"] == "" || g.Config["efidisk0"] != "" || g.Config["tpmstate0"] != "" {
		t.Fatalf("VM %d after the re-clone: %v", vmid, g.Config)
	}
}

// installVMConfig replaces the drives and boot order of the VM with the configuration's keys.
func installVMConfig(t *testing.T, h *svcHarness, vmid int, c vmConfig) {
	t.Helper()
	g, ok := h.sim.Guest(vmid)
	if !ok {
		t.Fatalf("VM %d is gone", vmid)
	}
	for k := range g.Config {
		if vmDriveKey.MatchString(k) {
			if err := h.sim.SetConfig(vmid, k, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, kv := range c.keys {
		if err := h.sim.SetConfig(vmid, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
}

// checkVMPreview checks one preview's disks and blockers against the configuration.
func checkVMPreview(t *testing.T, in map[string]any, c vmConfig) {
	t.Helper()
	disks, ok := in["disks"].([]any)
	if !ok || in["boot_disk"] == nil || in["state"] != "preview_ready" {
		t.Fatalf("preview without a disks array or boot disk: %v", in)
	}
	unknown := map[string]bool{}
	for _, d := range disks {
		dm := d.(map[string]any)
		if dm["data"] == "unknown" {
			unknown[dm["key"].(string)] = true
		}
	}
	var codes []string
	unclassified := map[string]bool{}
	for _, b := range in["blockers"].([]any) {
		bm := b.(map[string]any)
		codes = append(codes, bm["code"].(string))
		if bm["code"] == "mount_unclassifiable" {
			unclassified[bm["params"].(map[string]any)["key"].(string)] = true
		}
	}
	for k := range unclassified {
		if !unknown[k] {
			t.Errorf("mount_unclassifiable for %q, which no disk labelled unknown is: %v", k, in["blockers"])
		}
	}
	for k := range unknown {
		if !unclassified[k] {
			t.Errorf("disk %q labelled unknown without a mount_unclassifiable: %v", k, in["blockers"])
		}
	}
	sort.Strings(codes)
	want := append([]string(nil), c.expect...)
	sort.Strings(want)
	if strings.Join(codes, " ") != strings.Join(want, " ") {
		t.Errorf("blockers %v, want %v (disks %v)", codes, want, disks)
	}
}
