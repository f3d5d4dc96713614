package pvesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// VM cloud-init: the cloud-init keys, the drive, and GET/PUT .../cloudinit (what the
// drive holds against what the config says).

// cloudInitKey reports the config keys the cloud-init drive is generated from
// (qemu-server cloudinit_pending_properties: the cloud-init options, name and netN).
func cloudInitKey(k string) bool {
	switch k {
	case "ciuser", "cipassword", "sshkeys", "nameserver", "searchdomain", "citype", "ciupgrade", "cicustom", "name":
		return true
	}
	return indexedKey(k, "ipconfig") || indexedKey(k, "net")
}

// cloudInitOption reports the cloud-init options proper; a running VM takes them into
// its config at once, only the drive regeneration is pending (GET .../cloudinit).
func cloudInitOption(k string) bool {
	return cloudInitKey(k) && k != "name" && !indexedKey(k, "net")
}

func ciSnapshot(conf map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if cloudInitKey(k) {
			out[k] = v
		}
	}
	return out
}

func hashPassword(vmid int, pw string) string {
	if strings.HasPrefix(pw, "$") {
		return pw
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s", vmid, pw)))
	return "$5$pvesim" + strconv.Itoa(vmid) + "$" + hex.EncodeToString(sum[:])[:43]
}

func isCloudInitVol(ms mountSpec) bool {
	return strings.Contains(ms.volume, "cloudinit")
}

func (s *Sim) hQemuCloudInitGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	cur := ciSnapshot(effectiveConfig(g))
	gen := g.ciGenerated
	if gen == nil {
		gen = map[string]string{}
	}
	keys := map[string]bool{}
	for k := range cur {
		keys[k] = true
	}
	for k := range gen {
		keys[k] = true
	}
	out := []map[string]any{}
	for _, k := range sortedKeys(keys) {
		e := map[string]any{"key": k}
		gv, inGen := gen[k]
		cv, inCur := cur[k]
		if inGen {
			e["value"] = gv
		}
		if inCur && (!inGen || gv != cv) {
			e["pending"] = cv
		}
		if inGen && !inCur {
			e["delete"] = 1
		}
		if k == "cipassword" {
			if _, ok := e["value"]; ok {
				e["value"] = "**********"
			}
			if _, ok := e["pending"]; ok {
				e["pending"] = "**********"
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Sim) hQemuCloudInitPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	hasDrive := false
	for k, v := range g.conf {
		if qemuDiskKey(k) && isCloudInitVol(parseMount(v)) {
			hasDrive = true
		}
	}
	if !hasDrive {
		return nil, fail500("no cloudinit disk found")
	}
	g.ciGenerated = ciSnapshot(effectiveConfig(g))
	return nil, nil
}
