package pve

import (
	"context"
	"net/url"
	"strconv"
)

// guest is the identity shared by the container and VM clients.
type guest struct {
	c    *Client
	node string
	kind string // "lxc" or "qemu"
	vmid int
}

func (g guest) path(suffix string) (string, error) {
	if err := checkIdent("node", g.node); err != nil {
		return "", err
	}
	if err := checkVMID(g.vmid); err != nil {
		return "", err
	}
	return "/nodes/" + g.node + "/" + g.kind + "/" + strconv.Itoa(g.vmid) + suffix, nil
}

// call sends a request whose parameters come from a request struct.
func (g guest) call(ctx context.Context, method, suffix string, req any, out any) error {
	q, err := encodeForm(req)
	if err != nil {
		return err
	}
	return g.callValues(ctx, method, suffix, q, out)
}

func (g guest) callValues(ctx context.Context, method, suffix string, q url.Values, out any) error {
	p, err := g.path(suffix)
	if err != nil {
		return err
	}
	return g.c.DoRequest(ctx, method, p, q, out)
}

// start sends a request that answers with a UPID.
func (g guest) start(ctx context.Context, method, suffix string, req any) (string, error) {
	q, err := encodeForm(req)
	if err != nil {
		return "", err
	}
	return g.startValues(ctx, method, suffix, q)
}

func (g guest) startValues(ctx context.Context, method, suffix string, q url.Values) (string, error) {
	p, err := g.path(suffix)
	if err != nil {
		return "", err
	}
	return g.c.startTask(ctx, method, p, q)
}

// wait waits for the task a start call returned, or passes its error on.
func (g guest) wait(ctx context.Context, upid string, err error) (TaskResult, error) {
	if err != nil {
		return TaskResult{}, err
	}
	return g.c.Wait(ctx, upid)
}

// shutdownParams are the parameters of status/shutdown on both guest kinds. forceStop is
// always sent, 0 included: a shutdown that must not turn into a stop says so (R40).
type shutdownParams struct {
	Timeout   *int  `pve:"timeout"`
	ForceStop *bool `pve:"forceStop"`
}

func newShutdownParams(timeoutSec int, forceStop bool) shutdownParams {
	p := shutdownParams{ForceStop: &forceStop}
	if timeoutSec > 0 {
		p.Timeout = &timeoutSec
	}
	return p
}

// rebootParams are the parameters of status/reboot on both guest kinds: timeout bounds the
// shutdown half of the reboot.
type rebootParams struct {
	Timeout *int `pve:"timeout"`
}

func newRebootParams(timeoutSec int) rebootParams {
	var p rebootParams
	if timeoutSec > 0 {
		p.Timeout = &timeoutSec
	}
	return p
}

func (g guest) firewall() *FirewallClient { return &FirewallClient{g: g} }
