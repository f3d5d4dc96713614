package kinds

import (
	"context"
	"sort"

	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// SwapSampler is a kind whose guests' swap pvebill samples once a minute (R31): one index call
// a node gives every guest's figures, and a guest whose row carries no swap figure (an older
// Proxmox) is read on its own. The sampler (jobs) knows no kind: it asks every registered kind
// that has this capability.
type SwapSampler interface {
	Kind() plans.GuestType
	// SwapIndex reads a node's index of the kind's guests: the running guests' figures, and the
	// running guests whose row carried no swap figure.
	SwapIndex(ctx context.Context, c *pve.Client, node string) (SwapIndex, error)
	// SwapOne reads one guest's figures; running is false when it does not run.
	SwapOne(ctx context.Context, g Guest) (f GuestFigures, running bool, err error)
}

// SwapIndex is one node's index as a SwapSampler reads it, by vmid.
type SwapIndex struct {
	Running map[int]GuestFigures
	NoSwap  []int
}

// GuestFigures are a running guest's live figures as the sampler records them; Swap and
// SwapLimit are nil when Proxmox gave none.
type GuestFigures struct {
	Mem, Disk, NetIn, NetOut, Uptime int64
	CPU                              float64
	Swap, SwapLimit                  *int64
}

// SwapSamplers are the registered kinds that sample swap, in kind order.
func (r *Registry) SwapSamplers() []SwapSampler {
	var out []SwapSampler
	for _, m := range r.byKind {
		if s, ok := m.(SwapSampler); ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind() < out[j].Kind() })
	return out
}
