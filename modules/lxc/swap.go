package lxc

import (
	"context"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// A container's swap (R31): the node's container index (GET /nodes/{node}/lxc) carries swap and
// maxswap for every container since PVE 8; an older node's rows lack them, and such a
// container's status/current is read on its own.

var _ kinds.SwapSampler = (*Module)(nil)

// SwapIndex reads the node's container index once: running containers (templates left out).
func (m *Module) SwapIndex(ctx context.Context, c *pve.Client, node string) (kinds.SwapIndex, error) {
	rows, err := c.Node(node).ListLXC(ctx)
	if err != nil {
		return kinds.SwapIndex{}, fmt.Errorf("container index of %s: %w", node, err)
	}
	out := kinds.SwapIndex{Running: make(map[int]kinds.GuestFigures, len(rows))}
	for _, r := range rows {
		if !r.Running() || bool(r.Template) {
			continue
		}
		if r.Swap == nil {
			out.NoSwap = append(out.NoSwap, r.VMID.Int())
			continue
		}
		out.Running[r.VMID.Int()] = figuresOf(r)
	}
	return out, nil
}

// SwapOne reads one container's status/current.
func (m *Module) SwapOne(ctx context.Context, g kinds.Guest) (kinds.GuestFigures, bool, error) {
	st, err := ct(g).Status(ctx)
	if err != nil {
		return kinds.GuestFigures{}, false, err
	}
	return figuresOf(st), st.Running(), nil
}

func figuresOf(r pve.LXCStatus) kinds.GuestFigures {
	f := kinds.GuestFigures{Mem: int64(r.Mem), CPU: float64(r.CPU), Disk: int64(r.Disk), NetIn: int64(r.NetIn),
		NetOut: int64(r.NetOut), Uptime: int64(r.Uptime)}
	if r.Swap != nil {
		v := int64(*r.Swap)
		f.Swap = &v
	}
	if r.MaxSwap != nil {
		v := int64(*r.MaxSwap)
		f.SwapLimit = &v
	}
	return f
}
