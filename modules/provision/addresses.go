package provision

import (
	"context"

	"pvebill/models"
	"pvebill/modules/ippool"
	"pvebill/modules/kinds"
)

// IPPools adapts the IPv4 pools to Addresses.
func IPPools(s *ippool.Service) Addresses { return poolAddresses{s} }

type poolAddresses struct{ s *ippool.Service }

func (p poolAddresses) Allocate(ctx context.Context, pool string, k models.ServiceKey) (kinds.Address, error) {
	a, err := p.s.Allocate(ctx, pool, k)
	if err != nil {
		return kinds.Address{}, err
	}
	if a.Assigned.IsValid() {
		return kinds.Address{IP6: a.CIDR(), Gateway6: a.Gateway.String(), Nameservers: a.Nameservers}, nil
	}
	out := kinds.Address{CIDR: a.CIDR(), Nameservers: a.Nameservers}
	if a.Gateway.IsValid() {
		out.Gateway = a.Gateway.String()
	}
	return out, nil
}

func (p poolAddresses) Release(ctx context.Context, k models.ServiceKey) error {
	return p.s.Release(ctx, k)
}
