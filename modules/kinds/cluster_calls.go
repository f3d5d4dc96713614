package kinds

import (
	"context"
	"fmt"
	"strings"

	"pvebill/modules/pve"
)

// The calls of a cluster and its storages that flows make and that belong to no one kind: the
// cluster's resources and next free id (placement, R52, R2), the volumes a vmid left on a node
// (R2), and vzdump with its archives (backups, R42). The flows reach Proxmox through this
// package, never through the client itself.

// Errors of the Proxmox client a flow tells apart.
var (
	// ErrAlreadyExists: the id or name is taken.
	ErrAlreadyExists = pve.ErrAlreadyExists
	// ErrNotFound: the guest, volume or node is not there.
	ErrNotFound = pve.ErrNotFound
)

// The Proxmox types these calls answer with.
type (
	// ClusterResource is one row of /cluster/resources.
	ClusterResource = pve.ClusterResource
	// StorageItem is one volume of a storage's content listing.
	StorageItem = pve.StorageContent
	// VzdumpParams are a backup's vzdump parameters.
	VzdumpParams = pve.VzdumpParams
	// TaskResult is how a Proxmox task ended.
	TaskResult = pve.TaskResult
	// NodeListItem is one node of /nodes.
	NodeListItem = pve.NodeListItem
)

// NodeList lists the cluster's nodes as /nodes answers.
func (c Cluster) NodeList(ctx context.Context) ([]NodeListItem, error) { return c.Client.Nodes(ctx) }

// FirewallEnabled reads whether the datacenter firewall is on (R50).
func (c Cluster) FirewallEnabled(ctx context.Context) (bool, error) {
	opts, err := c.Client.Cluster().FirewallOptions(ctx)
	return err == nil && opts.Enabled(), err
}

// Resources lists the cluster's resources of type typ ("" for every type).
func (c Cluster) Resources(ctx context.Context, typ string) ([]ClusterResource, error) {
	return c.Client.Cluster().Resources(ctx, typ)
}

// NextID is Proxmox's next free vmid (want nil), or confirms that want is free: an id in use is
// ErrAlreadyExists.
func (c Cluster) NextID(ctx context.Context, want *int) (int, error) {
	return c.Client.Cluster().NextID(ctx, want)
}

// LeftoverVolumes lists the volumes named for vmid on the node's enabled disk storages: a guest
// made at vmid would inherit them.
func (c Cluster) LeftoverVolumes(ctx context.Context, node string, vmid int) ([]string, error) {
	n := c.Client.Node(node)
	stores, err := n.Storages(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list storages of %s: %w", node, err)
	}
	var out []string
	for _, st := range stores {
		if !strings.Contains(st.Content, "images") && !strings.Contains(st.Content, "rootdir") {
			continue
		}
		vols, err := n.Storage(st.Storage).Content(ctx, pve.ContentFilter{VMID: vmid})
		if err != nil {
			return nil, fmt.Errorf("list volumes of %s on %s: %w", st.Storage, node, err)
		}
		for _, v := range vols {
			if v.Content == "images" || v.Content == "rootdir" {
				out = append(out, v.VolID)
			}
		}
	}
	return out, nil
}

// BackupVolumes lists the backup archives of vmid on a storage as the node sees it.
func (c Cluster) BackupVolumes(ctx context.Context, node, storage string, vmid int) ([]StorageItem, error) {
	return c.Client.Node(node).Storage(storage).Content(ctx, pve.ContentFilter{Content: "backup", VMID: vmid})
}

// VolumeNotes are a volume's notes, read from its own attributes (a listing carries their first
// line only).
func (c Cluster) VolumeNotes(ctx context.Context, node, storage, volid string) (string, error) {
	attrs, err := c.Client.Node(node).Storage(storage).Volume(ctx, volid)
	return attrs.Notes, err
}

// DeleteVolume deletes a volume and waits for the task.
func (c Cluster) DeleteVolume(ctx context.Context, node, storage, volid string) (TaskResult, error) {
	upid, err := c.Client.Node(node).Storage(storage).DeleteVolume(ctx, volid)
	if err != nil {
		return TaskResult{}, err
	}
	return c.Client.Wait(ctx, upid)
}

// Vzdump backs a guest up on node and waits for the task.
func (c Cluster) Vzdump(ctx context.Context, node string, p VzdumpParams) (TaskResult, error) {
	upid, err := c.Client.Node(node).Vzdump(ctx, p)
	if err != nil {
		return TaskResult{}, err
	}
	return c.Client.Wait(ctx, upid)
}
