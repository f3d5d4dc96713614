package pve

import (
	"context"
	"encoding/json"
	"net/http"
)

// QEMUMigrateRequest is POST /nodes/{node}/qemu/{vmid}/migrate. A running VM needs Online;
// its local disks move with it only with WithLocalDisks (a stopped VM's always do).
type QEMUMigrateRequest struct {
	Target         string `pve:"target"`
	Online         *bool  `pve:"online"`
	WithLocalDisks *bool  `pve:"with-local-disks"`
	TargetStorage  string `pve:"targetstorage"`
	BWLimit        *int   `pve:"bwlimit"` // KiB/s
}

// LXCMigrateRequest is POST /nodes/{node}/lxc/{vmid}/migrate. A running container moves only
// in restart mode: it is shut down (Timeout seconds), copied, and started on the target.
type LXCMigrateRequest struct {
	Target        string `pve:"target"`
	Restart       *bool  `pve:"restart"`
	Timeout       *int   `pve:"timeout"`
	TargetStorage string `pve:"target-storage"`
	BWLimit       *int   `pve:"bwlimit"` // KiB/s
}

// MigratePrecondition is GET /nodes/{node}/qemu/{vmid}/migrate: what would keep the VM from
// moving. Proxmox does not weigh online state, memory or room (allowed_nodes is every node
// not refused by storage.cfg, mapped devices or HA rules).
type MigratePrecondition struct {
	Running         Bool                       `json:"running"`
	AllowedNodes    []string                   `json:"allowed_nodes"`
	NotAllowedNodes map[string]json.RawMessage `json:"not_allowed_nodes"`
	LocalDisks      []MigrateLocalDisk         `json:"local_disks"`
	LocalResources  []string                   `json:"local_resources"`
}

// MigrateLocalDisk is a volume of the VM on storage that is not shared.
type MigrateLocalDisk struct {
	VolID       string `json:"volid"`
	DriveName   string `json:"drivename"`
	CDROM       Bool   `json:"cdrom"`
	IsCloudInit Bool   `json:"is_cloudinit"`
	IsAttached  Bool   `json:"is_attached"`
}

// MigrateAsync sends POST .../migrate; the task (qmigrate) runs on this node. Once it
// succeeded the VM is addressed under the target node.
func (q *QEMUClient) MigrateAsync(ctx context.Context, req QEMUMigrateRequest) (string, error) {
	if err := checkIdent("target", req.Target); err != nil {
		return "", err
	}
	return q.g.start(ctx, http.MethodPost, "/migrate", req)
}

// MigratePrecondition reads GET .../migrate.
func (q *QEMUClient) MigratePrecondition(ctx context.Context) (MigratePrecondition, error) {
	var out MigratePrecondition
	err := q.g.call(ctx, http.MethodGet, "/migrate", nil, &out)
	return out, err
}

// MigrateAsync sends POST .../migrate; the task (vzmigrate) runs on this node.
func (l *LXCClient) MigrateAsync(ctx context.Context, req LXCMigrateRequest) (string, error) {
	if err := checkIdent("target", req.Target); err != nil {
		return "", err
	}
	return l.g.start(ctx, http.MethodPost, "/migrate", req)
}
