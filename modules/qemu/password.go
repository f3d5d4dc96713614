package qemu

import (
	"context"
	"errors"
	"fmt"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
)

// A VM's root password changes through its QEMU guest agent (R56, docs/proxmox.md §8.6), never
// through cloud-init's cipassword, which would make the next boot a first boot.

var _ kinds.PasswordSetter = (*Module)(nil)

// AgentReady pings the VM's guest agent. A stopped VM has no agent to answer either.
func (m *Module) AgentReady(ctx context.Context, g kinds.Guest) error {
	return agentError(vm(g).AgentPing(ctx))
}

// SetRootPassword sets the password of the cloud-init user (root) through the guest agent;
// Proxmox answers once the agent has.
func (m *Module) SetRootPassword(ctx context.Context, g kinds.Guest, password string) error {
	err := vm(g).SetUserPassword(ctx, pve.AgentPasswordRequest{Username: CIUser, Password: pve.Secret(password)})
	if err = agentError(err); err != nil {
		return fmt.Errorf("set the password of VM %d through its agent: %w", g.VMID, err)
	}
	return nil
}

// agentError sorts a guest agent call's failure: an agent that does not answer, or a VM that
// does not run, is kinds.ErrAgentNotRunning.
func agentError(err error) error {
	if errors.Is(err, pve.ErrAgentNotRunning) || errors.Is(err, pve.ErrNotRunning) {
		return fmt.Errorf("%w: %w", kinds.ErrAgentNotRunning, err)
	}
	return err
}
