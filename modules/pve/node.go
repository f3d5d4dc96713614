package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"pvebill/modules/pve/pveconf"
)

// NodeClient addresses one node.
type NodeClient struct {
	c    *Client
	name string
}

// Node returns the client for a node. The name is checked when a call is made.
func (c *Client) Node(name string) *NodeClient { return &NodeClient{c: c, name: name} }

// Name is the node's name.
func (n *NodeClient) Name() string { return n.name }

func (n *NodeClient) path(suffix string) (string, error) {
	if err := checkIdent("node", n.name); err != nil {
		return "", err
	}
	return "/nodes/" + n.name + suffix, nil
}

func (n *NodeClient) get(ctx context.Context, suffix string, q url.Values, out any) error {
	p, err := n.path(suffix)
	if err != nil {
		return err
	}
	return n.c.DoRequest(ctx, http.MethodGet, p, q, out)
}

// Status reads GET /nodes/{node}/status.
func (n *NodeClient) Status(ctx context.Context) (NodeStatus, error) {
	var out NodeStatus
	err := n.get(ctx, "/status", nil, &out)
	return out, err
}

// ListLXC reads the node's container index GET /nodes/{node}/lxc: one row per
// container with its swap use and limit (the figures /cluster/resources
// lacks).
func (n *NodeClient) ListLXC(ctx context.Context) ([]LXCStatus, error) {
	var out []LXCStatus
	err := n.get(ctx, "/lxc", nil, &out)
	return out, err
}

// Storages lists GET /nodes/{node}/storage, optionally only the storages
// that accept a content type ("rootdir", "images", "backup", ...).
func (n *NodeClient) Storages(ctx context.Context, content string) ([]StorageListItem, error) {
	var q url.Values
	if content != "" {
		q = url.Values{"content": {content}}
	}
	var out []StorageListItem
	err := n.get(ctx, "/storage", q, &out)
	return out, err
}

// Storage returns the client for one storage as seen from this node.
func (n *NodeClient) Storage(id string) *StorageClient { return &StorageClient{node: n, id: id} }

// StorageClient addresses one storage on one node.
type StorageClient struct {
	node *NodeClient
	id   string
}

// Content lists GET /nodes/{node}/storage/{storage}/content with the filter.
// Backups carry Protected and Notes.
func (s *StorageClient) Content(ctx context.Context, f ContentFilter) ([]StorageContent, error) {
	if err := checkIdent("storage", s.id); err != nil {
		return nil, err
	}
	q, err := encodeForm(f)
	if err != nil {
		return nil, err
	}
	var out []StorageContent
	err = s.node.get(ctx, "/storage/"+s.id+"/content", q, &out)
	return out, err
}

// Vzdump starts POST /nodes/{node}/vzdump and returns its UPID. It must be sent
// to the guest's node: elsewhere Proxmox answers "OK" and does nothing, which is
// an error here (docs/proxmox.md §9.2).
func (n *NodeClient) Vzdump(ctx context.Context, p VzdumpParams) (string, error) {
	if err := checkVMID(p.VMID); err != nil {
		return "", err
	}
	if err := checkIdent("storage", p.Storage); err != nil {
		return "", err
	}
	q, err := encodeForm(p)
	if err != nil {
		return "", err
	}
	path, err := n.path("/vzdump")
	if err != nil {
		return "", err
	}
	return n.c.startTask(ctx, http.MethodPost, path, q)
}

// Volume reads GET /nodes/{node}/storage/{storage}/content/{volume}: a volume's attributes,
// for a backup its whole notes (the listing carries their first line only).
func (s *StorageClient) Volume(ctx context.Context, volid string) (VolumeAttributes, error) {
	var out VolumeAttributes
	if err := checkIdent("storage", s.id); err != nil {
		return out, err
	}
	if !strings.HasPrefix(volid, s.id+":") {
		return out, fmt.Errorf("pve: volume %q is not on storage %s", volid, s.id)
	}
	err := s.node.get(ctx, "/storage/"+s.id+"/content/"+url.PathEscape(volid), nil, &out)
	return out, err
}

// DeleteVolume starts DELETE /nodes/{node}/storage/{storage}/content/{volume}
// for a volume id of this storage and returns its UPID. A protected backup is
// refused by Proxmox (docs/proxmox.md §15).
func (s *StorageClient) DeleteVolume(ctx context.Context, volid string) (string, error) {
	if err := checkIdent("storage", s.id); err != nil {
		return "", err
	}
	if !strings.HasPrefix(volid, s.id+":") {
		return "", fmt.Errorf("pve: volume %q is not on storage %s", volid, s.id)
	}
	path, err := s.node.path("/storage/" + s.id + "/content/" + url.PathEscape(volid))
	if err != nil {
		return "", err
	}
	return s.node.c.startTask(ctx, http.MethodDelete, path, nil)
}

// ArchiveConfig is what a backup archive's config says of the guest's volumes: the VM
// drive keys (ideN, sataN, scsiN, virtioN, efidisk0, tpmstate0) and the container mount
// keys (rootfs, mpN, unusedN) with their values. Nothing else of the config is kept, so a
// secret stored in it (cipassword) goes no further than the call.
type ArchiveConfig struct {
	Disks  map[string]string
	Mounts map[string]string
}

// ExtractConfig reads GET /nodes/{node}/vzdump/extractconfig for a backup volume: the
// config the guest had when it was backed up (docs/proxmox.md §9.5). The volume must be
// visible from the node.
func (n *NodeClient) ExtractConfig(ctx context.Context, volid string) (ArchiveConfig, error) {
	if !strings.Contains(volid, ":") {
		return ArchiveConfig{}, fmt.Errorf("pve: %q is not a volume id", volid)
	}
	var text string
	if err := n.get(ctx, "/vzdump/extractconfig", url.Values{"volume": {volid}}, &text); err != nil {
		return ArchiveConfig{}, err
	}
	out := ArchiveConfig{Disks: map[string]string{}, Mounts: map[string]string{}}
	for k, v := range pveconf.ParseConfigFile(text) {
		switch {
		case isQEMUDiskKey(k):
			out.Disks[k] = v
		case pveconf.IsMountKey(k):
			out.Mounts[k] = v
		}
	}
	return out, nil
}
