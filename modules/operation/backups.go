package operation

import (
	"context"
	"fmt"
	"strings"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// ProtectedBackup reports whether a storage of the node holding backups has a protected backup
// of vmid (the protected_backup_exists blocker, R25).
func ProtectedBackup(ctx context.Context, cl kinds.Cluster, node string, vmid int) (bool, error) {
	n := cl.Client.Node(node)
	stores, err := n.Storages(ctx, "backup")
	if err != nil {
		return false, fmt.Errorf("list backup storages of %s: %w", node, err)
	}
	for _, st := range stores {
		if !strings.Contains(st.Content, "backup") {
			continue
		}
		items, err := n.Storage(st.Storage).Content(ctx, pve.ContentFilter{Content: "backup", VMID: vmid})
		if err != nil {
			return false, fmt.Errorf("list backups on %s: %w", st.Storage, err)
		}
		for _, it := range items {
			if bool(it.Protected) && it.VMID.Int() == vmid {
				return true, nil
			}
		}
	}
	return false, nil
}
