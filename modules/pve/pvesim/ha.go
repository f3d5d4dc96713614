package pvesim

import (
	"strconv"
	"strings"
)

// HA resources (/cluster/ha/resources): an HA-managed guest is started and stopped
// through an HA request instead of directly.

// haState is the HA resources by service id (ct:100, vm:100). It is guarded by Sim.mu.
type haState struct {
	ha map[string]*haResource
}

func (hs *haState) resetHA() { hs.ha = map[string]*haResource{} }

type haResource struct {
	SID   string
	State string
}

func haSID(g *guest) string {
	if g.typ == "lxc" {
		return "ct:" + strconv.Itoa(g.vmid)
	}
	return "vm:" + strconv.Itoa(g.vmid)
}

func (s *Sim) hHAResources(_ *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []map[string]any{}
	for _, sid := range sortedKeys(s.ha) {
		r := s.ha[sid]
		typ := "ct"
		if strings.HasPrefix(sid, "vm:") {
			typ = "vm"
		}
		out = append(out, map[string]any{"sid": sid, "state": r.State, "type": typ, "digest": mapDigest(map[string]string{sid: r.State})})
	}
	return out, nil
}

func normalizeSID(sid string) string {
	if _, err := strconv.Atoi(sid); err == nil {
		return "vm:" + sid
	}
	return sid
}

func (s *Sim) hHAResourceCreate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	typ, idStr, _ := strings.Cut(sid, ":")
	id, _ := strconv.Atoi(idStr)
	g := s.guests[id]
	if g == nil {
		return nil, fail500("unable to find %s %d", map[string]string{"ct": "CT", "vm": "VM"}[typ], id)
	}
	sid = haSID(g)
	if _, ok := s.ha[sid]; ok {
		return nil, fail500("resource ID '%s' already defined", sid)
	}
	state := c.str("state")
	if state == "" {
		state = "started"
	}
	s.ha[sid] = &haResource{SID: sid, State: state}
	return nil, nil
}

func (s *Sim) hHAResourceUpdate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	r := s.ha[sid]
	if r == nil {
		return nil, fail500("no such resource '%s'", sid)
	}
	if c.has("state") {
		r.State = c.str("state")
	}
	return nil, nil
}

func (s *Sim) hHAResourceDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid := normalizeSID(c.str("sid"))
	if _, ok := s.ha[sid]; !ok {
		return nil, fail500("no such resource '%s'", sid)
	}
	delete(s.ha, sid)
	return nil, nil
}

// haTask submits an HA request instead of acting, for HA-managed guests (container or VM): the
// task ends when the request is queued and the guest's state follows. Callers hold the write
// lock. It reports false when the guest is not HA-managed.
func (s *Sim) haTask(c *reqCtx, container bool, vmid int, start bool) (string, bool) {
	prefix, noun := "vm:", "VM"
	if container {
		prefix, noun = "ct:", "CT"
	}
	r := s.ha[prefix+strconv.Itoa(vmid)]
	if r == nil {
		return "", false
	}
	typ, state, word := "hastop", "stopped", "stop"
	if start {
		typ, state, word = "hastart", "started", "start"
	}
	node := c.node
	t := s.newTask(c, node, typ, strconv.Itoa(vmid))
	t.logf("Requesting HA %s for %s %d", word, noun, vmid)
	t.finish = func(*task) error {
		r.State = state
		if g := s.guests[vmid]; g != nil && g.node == node {
			if start && !g.running {
				s.startGuest(g)
			} else if !start && g.running {
				g.running, g.paused, g.pid = false, false, 0
			}
		}
		return nil
	}
	return t.upid, true
}

// SetHAManaged makes a guest HA-managed with the requested state, as an administrator adds it
// to HA on a cluster (pvebill itself never creates HA resources).
func (s *Sim) SetHAManaged(vmid int, state string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guests[vmid]
	if g == nil {
		return fail500("unable to find guest %d", vmid)
	}
	sid := haSID(g)
	s.ha[sid] = &haResource{SID: sid, State: state}
	return nil
}
