package password

import (
	"context"

	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// change is one run of a password change: what its precheck found, for the stage after it.
type change struct {
	s        *Service
	r        *executor.Run
	password string
	setter   kinds.PasswordSetter
	g        kinds.Guest
}

// steps is the one ordered list of the action's stages (R27): a precheck that only reads, then
// the one call that changes the password.
var steps = []executor.Step[*change]{
	{Stage: StagePrecheck, Run: precheck},
	{Stage: StageSetPassword, Run: setPassword},
}

func (s *Service) run(ctx context.Context, r *executor.Run) error {
	return executor.RunSteps(ctx, r, steps, &change{s: s, r: r})
}

// precheck takes the password from this replica's memory: a replica that did not accept the
// request (it took the operation over from one that is gone) has none, and fails the operation
// as interrupted before anything reaches Proxmox (R26). Then the guest is checked again (R39)
// and its agent pinged.
func precheck(ctx context.Context, c *change) error {
	pw, ok := c.r.Secret(secretPassword)
	if !ok {
		return operation.Interrupted()
	}
	c.password = pw
	svc, err := c.s.o.DB.GetService(ctx, c.r.Op.Key())
	if err != nil {
		return err
	}
	if err := stateRefusal(svc); err != nil {
		return err
	}
	c.setter, c.g, err = c.s.ready(ctx, svc)
	return err
}

// setPassword sends set-user-password; Proxmox answers once the agent has set it.
func setPassword(ctx context.Context, c *change) error {
	if err := c.setter.SetRootPassword(ctx, c.g, c.password); err != nil {
		return agentProblem(err)
	}
	return nil
}
