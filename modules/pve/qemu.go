package pve

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// QEMUClient addresses one virtual machine on one node.
type QEMUClient struct{ g guest }

// QEMU returns the client for VM vmid on this node.
func (n *NodeClient) QEMU(vmid int) *QEMUClient {
	return &QEMUClient{g: guest{c: n.c, node: n.name, kind: "qemu", vmid: vmid}}
}

// VMID is the VM's id.
func (q *QEMUClient) VMID() int { return q.g.vmid }

// Node is the node the client addresses.
func (q *QEMUClient) Node() string { return q.g.node }

// CloneAsync sends POST .../clone from this VM (usually a template) to
// req.NewID. The task (qmclone) carries the source vmid in its UPID.
func (q *QEMUClient) CloneAsync(ctx context.Context, req QEMUCloneRequest) (string, error) {
	if err := checkVMID(req.NewID); err != nil {
		return "", err
	}
	return q.g.start(ctx, http.MethodPost, "/clone", req)
}

// Clone clones the VM and waits for the task.
func (q *QEMUClient) Clone(ctx context.Context, req QEMUCloneRequest) (TaskResult, error) {
	upid, err := q.CloneAsync(ctx, req)
	return q.g.wait(ctx, upid, err)
}

// Config reads the config with pending changes applied (Proxmox's default).
func (q *QEMUClient) Config(ctx context.Context) (QEMUConfig, error) {
	var out QEMUConfig
	err := q.g.callValues(ctx, http.MethodGet, "/config", nil, &out)
	return out, err
}

// ConfigCurrent reads the active config, without pending changes (current=1).
func (q *QEMUClient) ConfigCurrent(ctx context.Context) (QEMUConfig, error) {
	var out QEMUConfig
	err := q.g.callValues(ctx, http.MethodGet, "/config", url.Values{"current": {"1"}}, &out)
	return out, err
}

// UpdateConfig sends PUT .../config, which Proxmox applies synchronously.
func (q *QEMUClient) UpdateConfig(ctx context.Context, u QEMUConfigUpdate) error {
	form, err := u.form()
	if err != nil {
		return err
	}
	return q.g.callValues(ctx, http.MethodPut, "/config", form, nil)
}

// UpdateConfigAsync sends POST .../config, which runs as a task (qmconfig),
// and returns its UPID.
func (q *QEMUClient) UpdateConfigAsync(ctx context.Context, u QEMUConfigUpdate) (string, error) {
	form, err := u.form()
	if err != nil {
		return "", err
	}
	return q.g.startValues(ctx, http.MethodPost, "/config", form)
}

// ResizeAsync sends PUT .../resize (a task since PVE 8.0). Shrinking is
// refused; growing to the current size succeeds quietly.
func (q *QEMUClient) ResizeAsync(ctx context.Context, req ResizeRequest) (string, error) {
	return q.g.start(ctx, http.MethodPut, "/resize", req)
}

// Resize grows a disk and waits for the task.
func (q *QEMUClient) Resize(ctx context.Context, req ResizeRequest) (TaskResult, error) {
	upid, err := q.ResizeAsync(ctx, req)
	return q.g.wait(ctx, upid, err)
}

// Status reads GET .../status/current.
func (q *QEMUClient) Status(ctx context.Context) (QEMUStatus, error) {
	var out QEMUStatus
	err := q.g.callValues(ctx, http.MethodGet, "/status/current", nil, &out)
	return out, err
}

// StartAsync sends POST .../status/start.
func (q *QEMUClient) StartAsync(ctx context.Context) (string, error) {
	return q.g.startValues(ctx, http.MethodPost, "/status/start", nil)
}

// Start starts the VM and waits for the task.
func (q *QEMUClient) Start(ctx context.Context) (TaskResult, error) {
	upid, err := q.StartAsync(ctx)
	return q.g.wait(ctx, upid, err)
}

// StopAsync sends POST .../status/stop (hard stop).
func (q *QEMUClient) StopAsync(ctx context.Context) (string, error) {
	return q.g.startValues(ctx, http.MethodPost, "/status/stop", nil)
}

// Stop stops the VM and waits for the task.
func (q *QEMUClient) Stop(ctx context.Context) (TaskResult, error) {
	upid, err := q.StopAsync(ctx)
	return q.g.wait(ctx, upid, err)
}

// ShutdownAsync sends POST .../status/shutdown (ACPI or guest agent).
// timeoutSec > 0 is sent as timeout; forceStop stops the VM when it passes.
func (q *QEMUClient) ShutdownAsync(ctx context.Context, timeoutSec int, forceStop bool) (string, error) {
	return q.g.start(ctx, http.MethodPost, "/status/shutdown", newShutdownParams(timeoutSec, forceStop))
}

// Shutdown shuts the VM down and waits for the task.
func (q *QEMUClient) Shutdown(ctx context.Context, timeoutSec int, forceStop bool) (TaskResult, error) {
	upid, err := q.ShutdownAsync(ctx, timeoutSec, forceStop)
	return q.g.wait(ctx, upid, err)
}

// RebootAsync sends POST .../status/reboot (a running VM only); timeoutSec > 0 bounds its
// shutdown half.
func (q *QEMUClient) RebootAsync(ctx context.Context, timeoutSec int) (string, error) {
	return q.g.start(ctx, http.MethodPost, "/status/reboot", newRebootParams(timeoutSec))
}

// Reboot reboots the VM and waits for the task.
func (q *QEMUClient) Reboot(ctx context.Context, timeoutSec int) (TaskResult, error) {
	upid, err := q.RebootAsync(ctx, timeoutSec)
	return q.g.wait(ctx, upid, err)
}

// SuspendAsync pauses the VM: POST .../status/suspend without todisk (task
// qmpause). The VM keeps its memory; status stays running, qmpstatus becomes
// paused. Hibernation (todisk) is not offered.
func (q *QEMUClient) SuspendAsync(ctx context.Context) (string, error) {
	return q.g.startValues(ctx, http.MethodPost, "/status/suspend", nil)
}

// Suspend pauses the VM and waits for the task.
func (q *QEMUClient) Suspend(ctx context.Context) (TaskResult, error) {
	upid, err := q.SuspendAsync(ctx)
	return q.g.wait(ctx, upid, err)
}

// ResumeAsync sends POST .../status/resume.
func (q *QEMUClient) ResumeAsync(ctx context.Context) (string, error) {
	return q.g.startValues(ctx, http.MethodPost, "/status/resume", nil)
}

// Resume resumes a paused VM and waits for the task.
func (q *QEMUClient) Resume(ctx context.Context) (TaskResult, error) {
	upid, err := q.ResumeAsync(ctx)
	return q.g.wait(ctx, upid, err)
}

// DeleteAsync sends DELETE /nodes/{node}/qemu/{vmid} (task qmdestroy). The VM
// must be stopped.
func (q *QEMUClient) DeleteAsync(ctx context.Context, opts QEMUDeleteOptions) (string, error) {
	return q.g.start(ctx, http.MethodDelete, "", opts)
}

// Delete destroys the VM and waits for the task.
func (q *QEMUClient) Delete(ctx context.Context, opts QEMUDeleteOptions) (TaskResult, error) {
	upid, err := q.DeleteAsync(ctx, opts)
	return q.g.wait(ctx, upid, err)
}

// Firewall returns the VM's firewall client.
func (q *QEMUClient) Firewall() *FirewallClient { return q.g.firewall() }

// Restore restores a backup archive at the VM's vmid (over the VM with Force) and waits for
// the qmrestore task.
func (q *QEMUClient) Restore(ctx context.Context, req QEMURestoreRequest) (TaskResult, error) {
	if err := checkIdent("node", q.g.node); err != nil {
		return TaskResult{}, err
	}
	if err := checkVMID(q.g.vmid); err != nil {
		return TaskResult{}, err
	}
	f, err := encodeForm(req)
	if err != nil {
		return TaskResult{}, err
	}
	f.Set("vmid", strconv.Itoa(q.g.vmid))
	upid, err := q.g.c.startTask(ctx, http.MethodPost, "/nodes/"+q.g.node+"/qemu", f)
	return q.g.wait(ctx, upid, err)
}

// AgentPing sends POST .../agent/ping: nil when the VM's guest agent answers, ErrAgentNotRunning
// when it does not (or is not configured), ErrNotRunning for a stopped VM (docs/proxmox.md §8.6).
func (q *QEMUClient) AgentPing(ctx context.Context) error {
	return q.g.callValues(ctx, http.MethodPost, "/agent/ping", nil, nil)
}

// SetUserPassword sends POST .../agent/set-user-password, which returns once the guest agent
// has set the password (synchronous, no task). The password is a Secret: it goes into the form
// and nowhere else.
func (q *QEMUClient) SetUserPassword(ctx context.Context, req AgentPasswordRequest) error {
	return q.g.call(ctx, http.MethodPost, "/agent/set-user-password", req, nil)
}
