package provision

import (
	"context"

	"pvebill/models"
	"pvebill/modules/kinds"
)

// CheckedGuest is the service's guest for a flow of its own package (modules/password): found
// at its vmid, of the service's kind and carrying the service's stamp (R39), with its kind's
// module. Anything else refuses before a single change is sent.
func (s *Provisioner) CheckedGuest(ctx context.Context, svc *models.Service) (kinds.Module, kinds.Guest, error) {
	t, err := s.target(ctx, svc)
	if err != nil {
		return nil, kinds.Guest{}, err
	}
	return t.mod, t.g, nil
}
