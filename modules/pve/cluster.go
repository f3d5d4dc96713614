package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// MinVMID and MaxVMID bound a valid guest id (pve-common's pve-vmid).
const (
	MinVMID = 100
	MaxVMID = 999999999
)

// checkIdent refuses an identifier that cannot be one path segment.
func checkIdent(kind, s string) error {
	if s == "" {
		return fmt.Errorf("pve: empty %s", kind)
	}
	if strings.ContainsAny(s, "/?#%\\") || strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) >= 0 {
		return fmt.Errorf("pve: %s %q is not a valid path segment", kind, s)
	}
	return nil
}

func checkVMID(vmid int) error {
	if vmid < MinVMID || vmid > MaxVMID {
		return fmt.Errorf("pve: vmid %d out of range %d-%d", vmid, MinVMID, MaxVMID)
	}
	return nil
}

// ClusterClient reads cluster-wide state.
type ClusterClient struct{ c *Client }

// Cluster returns the cluster-wide client.
func (c *Client) Cluster() *ClusterClient { return &ClusterClient{c: c} }

// Resources lists GET /cluster/resources, filtered by typ (ResourceVM,
// ResourceStorage, ResourceNode, ResourceSDN; "" for everything). With
// ResourceVM each row's Type tells qemu from lxc.
func (cc *ClusterClient) Resources(ctx context.Context, typ string) ([]ClusterResource, error) {
	var q url.Values
	if typ != "" {
		q = url.Values{"type": {typ}}
	}
	var out []ClusterResource
	err := cc.c.DoRequest(ctx, http.MethodGet, "/cluster/resources", q, &out)
	return out, err
}

// NextID asks GET /cluster/nextid for a free vmid. With vmid set it checks
// that id: a taken one is [ErrAlreadyExists]. No id is reserved; create can
// still lose the race and fail with [ErrAlreadyExists].
func (cc *ClusterClient) NextID(ctx context.Context, vmid *int) (int, error) {
	var q url.Values
	if vmid != nil {
		if err := checkVMID(*vmid); err != nil {
			return 0, err
		}
		q = url.Values{"vmid": {strconv.Itoa(*vmid)}}
	}
	var id Int
	if err := cc.c.DoRequest(ctx, http.MethodGet, "/cluster/nextid", q, &id); err != nil {
		return 0, err
	}
	return id.Int(), nil
}

// FirewallOptions reads the datacenter firewall options (GET
// /cluster/firewall/options). Guest anti-spoofing only applies when the
// datacenter firewall is enabled.
func (cc *ClusterClient) FirewallOptions(ctx context.Context) (ClusterFirewallOptions, error) {
	var out ClusterFirewallOptions
	err := cc.c.DoRequest(ctx, http.MethodGet, "/cluster/firewall/options", nil, &out)
	return out, err
}

// Nodes lists GET /nodes.
func (c *Client) Nodes(ctx context.Context) ([]NodeListItem, error) {
	var out []NodeListItem
	err := c.DoRequest(ctx, http.MethodGet, "/nodes", nil, &out)
	return out, err
}

// StorageConfigs reads GET /storage: every storage configured in the cluster.
func (c *Client) StorageConfigs(ctx context.Context) ([]StorageConfig, error) {
	var out []StorageConfig
	err := c.DoRequest(ctx, http.MethodGet, "/storage", nil, &out)
	return out, err
}
