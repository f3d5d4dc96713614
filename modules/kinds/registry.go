package kinds

import (
	"fmt"
	"sort"

	"pvebill/modules/plans"
)

// Registry holds one Module per guest kind. Modules are registered in one explicit table
// (the wiring package calls NewRegistry with lxc.New() and qemu.New()); a duplicate kind
// panics: registration is static.
type Registry struct {
	byKind map[plans.GuestType]Module
}

// NewRegistry registers mods.
func NewRegistry(mods ...Module) *Registry {
	r := &Registry{byKind: map[plans.GuestType]Module{}}
	for _, m := range mods {
		if _, dup := r.byKind[m.Kind()]; dup {
			panic(fmt.Sprintf("modules: duplicate module for %s", m.Kind()))
		}
		r.byKind[m.Kind()] = m
	}
	return r
}

// Get returns the module of a guest kind.
func (r *Registry) Get(kind plans.GuestType) (Module, bool) {
	m, ok := r.byKind[kind]
	return m, ok
}

// Built is what the registered modules implement, for plans' capability sets: computed from
// each module's declarations (Capabilities).
func (r *Registry) Built() plans.Built {
	out := plans.Built{}
	kinds := make([]string, 0, len(r.byKind))
	for k := range r.byKind {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		out[plans.GuestType(k)] = Capabilities(r.byKind[plans.GuestType(k)])
	}
	return out
}
