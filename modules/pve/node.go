package pve

import (
	"context"
	"net/http"
	"net/url"
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
