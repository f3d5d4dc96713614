package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// The QEMU guest agent (the sub paths of /nodes/{node}/qemu/{vmid}/agent), for a running
// VM with the agent enabled. Its answers are fixed or derived from the config. A VM's agent
// runs whenever the VM does, unless a test stopped it (SetAgentRunning).

func (s *Sim) hQemuAgent(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	agent := g.conf["agent"]
	if !strings.HasPrefix(agent, "1") && !strings.Contains(agent, "enabled=1") {
		return nil, fail500("No QEMU guest agent configured")
	}
	if !g.running {
		return nil, fail500("VM %d is not running", g.vmid)
	}
	if g.agentDown {
		// Proxmox pings the agent first (3 s timeout); a guest whose agent does not answer
		// fails every agent call with this message (docs/proxmox.md).
		return nil, fail500("QEMU guest agent is not running")
	}
	cmd := c.template[strings.LastIndex(c.template, "/")+1:]
	switch cmd {
	case "set-user-password":
		return map[string]any{"result": map[string]any{}}, nil
	case "file-write":
		return nil, nil
	case "exec":
		return map[string]any{"pid": 1000 + g.vmid%1000}, nil
	case "exec-status":
		return map[string]any{"exited": 1, "exitcode": 0, "out-data": ""}, nil
	case "file-read":
		return map[string]any{"content": "", "truncated": false}, nil
	}
	return map[string]any{"result": s.agentResult(g, cmd)}, nil
}

// agentAnswers are the agent commands with an answer of their own; every other
// command answers an empty object.
var agentAnswers = map[string]func(s *Sim, g *guest) any{
	"fsfreeze-status": func(*Sim, *guest) any { return "thawed" },
	"get-host-name":   func(s *Sim, g *guest) any { return map[string]any{"host-name": s.guestName(g)} },
	"get-osinfo": func(*Sim, *guest) any {
		return map[string]any{"id": "debian", "name": "Debian GNU/Linux", "version-id": "12", "kernel-release": "6.1.0-28-amd64", "machine": "x86_64", "pretty-name": "Debian GNU/Linux 12 (bookworm)"}
	},
	"get-time":     func(s *Sim, _ *guest) any { return s.now().UnixNano() },
	"get-timezone": func(*Sim, *guest) any { return map[string]any{"zone": "UTC", "offset": 0} },
	"info": func(*Sim, *guest) any {
		return map[string]any{"version": "7.2.15", "supported_commands": []map[string]any{{"name": "guest-ping", "enabled": true, "success-response": true}}}
	},
	"get-vcpus": func(*Sim, *guest) any {
		return []map[string]any{{"logical-id": 0, "online": true, "can-offline": false}}
	},
	"get-users": func(*Sim, *guest) any { return []map[string]any{} },
	"get-fsinfo": func(_ *Sim, g *guest) any {
		return []map[string]any{{"name": "sda1", "mountpoint": "/", "type": "ext4", "total-bytes": rootSize(g), "used-bytes": rootSize(g) / 4}}
	},
	"network-get-interfaces": func(_ *Sim, g *guest) any { return agentInterfaces(g) },
	"get-memory-blocks": func(*Sim, *guest) any {
		return []map[string]any{{"phys-index": 0, "online": true, "can-offline": false}}
	},
	"get-memory-block-info": func(*Sim, *guest) any { return map[string]any{"size": 134217728} },
}

func (s *Sim) agentResult(g *guest, cmd string) any {
	if f, ok := agentAnswers[cmd]; ok {
		return f(s, g)
	}
	return map[string]any{}
}

// agentInterfaces is network-get-interfaces: lo, and an ethN per netN with the MAC of
// netN and the static IPv4 address of ipconfigN.
func agentInterfaces(g *guest) []map[string]any {
	out := []map[string]any{{"name": "lo", "hardware-address": "00:00:00:00:00:00",
		"ip-addresses": []map[string]any{{"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8}}}}
	for _, k := range sortedKeys(g.conf) {
		if !indexedKey(k, "net") {
			continue
		}
		n := strings.TrimPrefix(k, "net")
		mac := ""
		if first, _, _ := strings.Cut(g.conf[k], ","); strings.Contains(first, "=") {
			_, mac, _ = strings.Cut(first, "=")
		}
		addrs := []map[string]any{}
		for _, part := range strings.Split(g.conf["ipconfig"+n], ",") {
			kk, vv, _ := strings.Cut(part, "=")
			if kk == "ip" && strings.Contains(vv, "/") {
				addr, bits, _ := strings.Cut(vv, "/")
				p, _ := strconv.Atoi(bits)
				addrs = append(addrs, map[string]any{"ip-address": addr, "ip-address-type": "ipv4", "prefix": p})
			}
		}
		out = append(out, map[string]any{"name": "eth" + n, "hardware-address": strings.ToLower(mac), "ip-addresses": addrs})
	}
	return out
}

// SetAgentRunning starts or stops the guest agent inside VM vmid: a stopped agent fails every
// agent call of the running VM with Proxmox's "QEMU guest agent is not running". It is not a
// config change (the agent stays configured) and survives the VM's restarts.
func (s *Sim) SetAgentRunning(vmid int, running bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.guests[vmid]
	if !ok || g.typ != "qemu" {
		return fmt.Errorf("no VM %d", vmid)
	}
	g.agentDown = !running
	return nil
}
