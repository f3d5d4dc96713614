package pvesim

import (
	"sort"
	"strconv"
)

// poolState is the resource pools by id. It is guarded by Sim.mu.
type poolState struct {
	pools map[string]*pool
}

func (ps *poolState) resetPools() { ps.pools = map[string]*pool{} }

// Resource pools (pve-access-control API2/Pool.pm), enough for create and clone's pool=.

type pool struct {
	comment string
	members map[int]bool
}

// AddPool creates a resource pool.
func (s *Sim) AddPool(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools[id] == nil {
		s.pools[id] = &pool{members: map[int]bool{}}
	}
}

// checkPool fails like check_pool_exist when pool= names an unknown pool. Callers hold s.mu.
func (s *Sim) checkPool(c *reqCtx) error {
	if !c.has("pool") {
		return nil
	}
	if s.pools[c.str("pool")] == nil {
		return permErr("pool '" + c.str("pool") + "' does not exist")
	}
	return nil
}

// addToPool puts a guest into a pool. Callers hold the write lock.
func (s *Sim) addToPool(id string, vmid int) {
	if p := s.pools[id]; p != nil {
		p.members[vmid] = true
	}
}

// poolOf returns the pool a guest is in ("" if none). Callers hold s.mu.
func (s *Sim) poolOf(vmid int) string {
	for _, id := range sortedKeys(s.pools) {
		if s.pools[id].members[vmid] {
			return id
		}
	}
	return ""
}

func (s *Sim) poolEntry(id string, p *pool, typ string) map[string]any {
	e := map[string]any{"poolid": id}
	if p.comment != "" {
		e["comment"] = p.comment
	}
	var members []map[string]any
	ids := make([]int, 0, len(p.members))
	for vmid := range p.members {
		ids = append(ids, vmid)
	}
	sort.Ints(ids)
	for _, vmid := range ids {
		g := s.guests[vmid]
		if g == nil || (typ != "" && typ != g.typ) {
			continue
		}
		members = append(members, map[string]any{"id": g.typ + "/" + strconv.Itoa(vmid), "vmid": vmid, "type": g.typ, "node": g.node})
	}
	if members == nil {
		members = []map[string]any{}
	}
	e["members"] = members
	return e
}

func (s *Sim) hPoolsGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []map[string]any{}
	for _, id := range sortedKeys(s.pools) {
		if c.has("poolid") && c.str("poolid") != id {
			continue
		}
		out = append(out, s.poolEntry(id, s.pools[id], c.str("type")))
	}
	if c.has("poolid") && len(out) == 0 {
		return nil, fail500("pool '%s' does not exist", c.str("poolid"))
	}
	return out, nil
}

func (s *Sim) hPoolDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.str("poolid")
	p := s.pools[id]
	if p == nil {
		return nil, fail500("delete pool failed: pool '%s' does not exist", id)
	}
	if len(p.members) > 0 {
		return nil, fail500("delete pool failed: pool '%s' is not empty", id)
	}
	delete(s.pools, id)
	return nil, nil
}
