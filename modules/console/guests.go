package console

import (
	"context"
	"errors"
	"fmt"

	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// GuestOpener is the Opener of the service's guests (R41): it opens consoles through the kinds
// that have one (kinds.Consoler), after the same checks as every action on a guest: found at
// its vmid, of the service's kind, carrying the service's stamp (R39).
type GuestOpener struct {
	guests *operation.Guests
	plans  *plans.Service
}

// NewGuestOpener builds the opener over the shared guest lookup and the plans.
func NewGuestOpener(guests *operation.Guests, ps *plans.Service) *GuestOpener {
	return &GuestOpener{guests: guests, plans: ps}
}

// ConsoleKinds lists the consoles of a guest type, the default first; none when its kind has no
// console.
func (s *GuestOpener) ConsoleKinds(guestType string) []Kind {
	mod, err := s.guests.Module(guestType)
	if err != nil {
		return nil
	}
	c, ok := mod.(kinds.Consoler)
	if !ok {
		return nil
	}
	var out []Kind
	for _, p := range c.ConsoleProtocols() {
		out = append(out, Kind(p))
	}
	return out
}

// ConsoleOffered checks that the service's plan offers its guest a console on the service's
// cluster (R41): a cluster without a console user refuses it, capability_refused and
// permanent, before anything reaches Proxmox.
func (s *GuestOpener) ConsoleOffered(ctx context.Context, svc *models.Service) error {
	p, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return err
	}
	p.Cluster = svc.Cluster // the guest's cluster decides, should the plan name another since
	set, ok := s.plans.Capabilities(p)[plans.GuestType(svc.GuestType)]
	if !ok {
		return nil // the plan no longer offers the guest's type: the kind decides
	}
	return plans.Refused(plans.CapConsole, set[plans.CapConsole])
}

// ConsoleReady checks, before a console URL is handed out, that the service's guest is its own
// (R39) and runs.
func (s *GuestOpener) ConsoleReady(ctx context.Context, svc *models.Service) error {
	t, err := s.guests.Inspect(ctx, svc)
	if err != nil {
		return err
	}
	if !t.In.Running {
		return operation.NotRunning()
	}
	return nil
}

// OpenConsole opens the console of the service's guest under ctx (the session's life). The
// guest is located, not inspected: the kind's OpenConsole checks its stamp and that it runs
// (kinds.ConsoleTarget), in one read of the guest.
func (s *GuestOpener) OpenConsole(ctx context.Context, svc *models.Service, kind Kind) (Upstream, error) {
	t, err := s.guests.Locate(ctx, svc)
	if err != nil {
		return Upstream{}, err
	}
	c, ok := t.Mod.(kinds.Consoler)
	if !ok {
		return Upstream{}, operation.NotAvailable()
	}
	open, err := c.OpenConsole(ctx, t.Guest)
	switch {
	case errors.Is(err, kinds.ErrNotOurs):
		return Upstream{}, operation.NotOurs(t.Guest.VMID)
	case errors.Is(err, kinds.ErrGuestNotRunning):
		return Upstream{}, operation.NotRunning().Wrap(err)
	case errors.Is(err, kinds.ErrNoConsoleUser):
		return Upstream{}, operation.NotAvailable().Wrap(err)
	case err != nil:
		return Upstream{}, err
	}
	if open.Protocol != kinds.ConsoleProtocol(kind) {
		_ = open.Close()
		return Upstream{}, fmt.Errorf("console: the guest opened %s, not %s", open.Protocol, kind)
	}
	return Upstream{Conn: open.Upstream, Greet: open.GreetBrowser}, nil
}
