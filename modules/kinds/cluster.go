package kinds

import (
	"context"
	"fmt"

	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

// Cluster is one configured Proxmox cluster: its name, its client and the nodes guests may be
// placed on (empty: every online node). Provisioning, reinstalls and the jobs share this one
// type.
type Cluster struct {
	Name   string
	Client *pve.Client
	Nodes  []string
	// MemoryOvercommit multiplies a node's memory for placement (R52); zero counts as 1.0.
	MemoryOvercommit float64
}

// Located is where a vmid lives in a cluster, read from /cluster/resources?type=vm, whose rows
// carry every kind: the kind comes from each row's type (R3).
type Located struct {
	Found bool
	Node  string
	Kind  plans.GuestType
	// Running is the row's status as the cluster listing says it ("running").
	Running bool
}

// KindOf is the guest kind of a /cluster/resources row type ("" for a type no registered module
// provisions).
func (r *Registry) KindOf(resourceType string) plans.GuestType {
	for _, m := range r.byKind {
		if m.ResourceType() == resourceType {
			return m.Kind()
		}
	}
	return ""
}

// Locate finds vmid in the cluster listing: its node and kind (Found false when no guest of a
// registered kind is there).
func (r *Registry) Locate(ctx context.Context, cl Cluster, vmid int) (Located, error) {
	rows, err := cl.Client.Cluster().Resources(ctx, "vm")
	if err != nil {
		return Located{}, fmt.Errorf("list guests of %s: %w", cl.Name, err)
	}
	for _, row := range rows {
		if row.VMID.Int() != vmid {
			continue
		}
		if k := r.KindOf(row.Type); k != "" {
			return Located{Found: true, Node: row.Node, Kind: k, Running: row.Status == "running"}, nil
		}
	}
	return Located{}, nil
}
