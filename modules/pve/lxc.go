package pve

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// LXCClient addresses one container on one node. It has no suspend method on
// purpose: Proxmox's container status/suspend is an experimental CRIU
// checkpoint that stops the container, and pvebill never calls it (R13, R15).
type LXCClient struct{ g guest }

// LXC returns the client for container vmid on this node.
func (n *NodeClient) LXC(vmid int) *LXCClient {
	return &LXCClient{g: guest{c: n.c, node: n.name, kind: "lxc", vmid: vmid}}
}

// VMID is the container's id.
func (l *LXCClient) VMID() int { return l.g.vmid }

// Node is the node the client addresses.
func (l *LXCClient) Node() string { return l.g.node }

// CreateAsync sends POST /nodes/{node}/lxc with this client's vmid and returns
// the UPID (task vzcreate, or vzrestore with Restore). Synchronous refusals
// such as [ErrAlreadyExists] come back as errors before any task starts.
func (l *LXCClient) CreateAsync(ctx context.Context, req LXCCreateRequest) (string, error) {
	if err := checkIdent("node", l.g.node); err != nil {
		return "", err
	}
	if err := checkVMID(l.g.vmid); err != nil {
		return "", err
	}
	q, err := encodeForm(req)
	if err != nil {
		return "", err
	}
	q.Set("vmid", strconv.Itoa(l.g.vmid))
	return l.g.c.startTask(ctx, http.MethodPost, "/nodes/"+l.g.node+"/lxc", q)
}

// Create creates the container and waits for the task.
func (l *LXCClient) Create(ctx context.Context, req LXCCreateRequest) (TaskResult, error) {
	upid, err := l.CreateAsync(ctx, req)
	return l.g.wait(ctx, upid, err)
}

// Config reads the config with pending changes applied (Proxmox's default).
func (l *LXCClient) Config(ctx context.Context) (LXCConfig, error) {
	var out LXCConfig
	err := l.g.callValues(ctx, http.MethodGet, "/config", nil, &out)
	return out, err
}

// ConfigCurrent reads the active config, without pending changes (current=1).
func (l *LXCClient) ConfigCurrent(ctx context.Context) (LXCConfig, error) {
	var out LXCConfig
	err := l.g.callValues(ctx, http.MethodGet, "/config", url.Values{"current": {"1"}}, &out)
	return out, err
}

// Pending reads GET .../pending: each key's active and pending value.
func (l *LXCClient) Pending(ctx context.Context) ([]PendingItem, error) {
	var out []PendingItem
	err := l.g.callValues(ctx, http.MethodGet, "/pending", nil, &out)
	return out, err
}

// UpdateConfig sends PUT .../config (synchronous; a new mpN is allocated
// within the request). A 596 here may have been applied: read back.
func (l *LXCClient) UpdateConfig(ctx context.Context, u LXCConfigUpdate) error {
	return l.g.call(ctx, http.MethodPut, "/config", u, nil)
}

// Status reads GET .../status/current.
func (l *LXCClient) Status(ctx context.Context) (LXCStatus, error) {
	var out LXCStatus
	err := l.g.callValues(ctx, http.MethodGet, "/status/current", nil, &out)
	return out, err
}

// StartAsync sends POST .../status/start. A running container answers
// [ErrAlreadyRunning].
func (l *LXCClient) StartAsync(ctx context.Context) (string, error) {
	return l.g.startValues(ctx, http.MethodPost, "/status/start", nil)
}

// Start starts the container and waits for the task.
func (l *LXCClient) Start(ctx context.Context) (TaskResult, error) {
	upid, err := l.StartAsync(ctx)
	return l.g.wait(ctx, upid, err)
}

// StopAsync sends POST .../status/stop (hard stop). A stopped container
// answers [ErrNotRunning]; one under backup [ErrLocked].
func (l *LXCClient) StopAsync(ctx context.Context) (string, error) {
	return l.g.startValues(ctx, http.MethodPost, "/status/stop", nil)
}

// Stop stops the container and waits for the task.
func (l *LXCClient) Stop(ctx context.Context) (TaskResult, error) {
	upid, err := l.StopAsync(ctx)
	return l.g.wait(ctx, upid, err)
}

// ShutdownAsync sends POST .../status/shutdown. timeoutSec > 0 is sent as
// timeout (Proxmox's default is 60 s); forceStop stops the container when
// the timeout passes.
func (l *LXCClient) ShutdownAsync(ctx context.Context, timeoutSec int, forceStop bool) (string, error) {
	return l.g.start(ctx, http.MethodPost, "/status/shutdown", newShutdownParams(timeoutSec, forceStop))
}

// Shutdown shuts the container down and waits for the task.
func (l *LXCClient) Shutdown(ctx context.Context, timeoutSec int, forceStop bool) (TaskResult, error) {
	upid, err := l.ShutdownAsync(ctx, timeoutSec, forceStop)
	return l.g.wait(ctx, upid, err)
}

// RebootAsync sends POST .../status/reboot (a running container only); timeoutSec > 0 bounds
// its shutdown half.
func (l *LXCClient) RebootAsync(ctx context.Context, timeoutSec int) (string, error) {
	return l.g.start(ctx, http.MethodPost, "/status/reboot", newRebootParams(timeoutSec))
}

// Reboot reboots the container and waits for the task.
func (l *LXCClient) Reboot(ctx context.Context, timeoutSec int) (TaskResult, error) {
	upid, err := l.RebootAsync(ctx, timeoutSec)
	return l.g.wait(ctx, upid, err)
}

// DeleteAsync sends DELETE /nodes/{node}/lxc/{vmid} (task vzdestroy).
func (l *LXCClient) DeleteAsync(ctx context.Context, opts LXCDeleteOptions) (string, error) {
	return l.g.start(ctx, http.MethodDelete, "", opts)
}

// Delete destroys the container and waits for the task.
func (l *LXCClient) Delete(ctx context.Context, opts LXCDeleteOptions) (TaskResult, error) {
	upid, err := l.DeleteAsync(ctx, opts)
	return l.g.wait(ctx, upid, err)
}

// ResizeAsync sends PUT .../resize (disk rootfs or mpN). Growing to the
// current size fails on containers ("disk is already at specified size").
func (l *LXCClient) ResizeAsync(ctx context.Context, req ResizeRequest) (string, error) {
	return l.g.start(ctx, http.MethodPut, "/resize", req)
}

// Resize grows a volume and waits for the task.
func (l *LXCClient) Resize(ctx context.Context, req ResizeRequest) (TaskResult, error) {
	upid, err := l.ResizeAsync(ctx, req)
	return l.g.wait(ctx, upid, err)
}

// Interfaces reads GET .../interfaces (names and addresses of a running
// container; no guest agent involved).
func (l *LXCClient) Interfaces(ctx context.Context) ([]LXCInterface, error) {
	var out []LXCInterface
	err := l.g.callValues(ctx, http.MethodGet, "/interfaces", nil, &out)
	return out, err
}

// Firewall returns the container's firewall client.
func (l *LXCClient) Firewall() *FirewallClient { return l.g.firewall() }
