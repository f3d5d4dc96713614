package operation

import (
	"fmt"
	"sort"

	"pvebill/modules/kinds"
)

// Clusters are the configured clusters by name.
type Clusters map[string]kinds.Cluster

// NewClusters indexes cls by name.
func NewClusters(cls []kinds.Cluster) Clusters {
	out := make(Clusters, len(cls))
	for _, c := range cls {
		out[c.Name] = c
	}
	return out
}

// Get returns a cluster; one that is not configured is proxmox_unavailable (temporary: a
// configuration can be fixed).
func (c Clusters) Get(name string) (kinds.Cluster, error) {
	cl, ok := c[name]
	if !ok {
		return kinds.Cluster{}, Unavailable(fmt.Errorf("cluster %q is not configured", name))
	}
	return cl, nil
}

// Names lists the cluster names in order.
func (c Clusters) Names() []string {
	out := make([]string, 0, len(c))
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
