package provision

import (
	"context"

	"pvebill/modules"
	"pvebill/modules/ippool"
)

// IPPools adapts the IPv4 pools to Addresses.
func IPPools(s *ippool.Service) Addresses { return poolAddresses{s} }

type poolAddresses struct{ s *ippool.Service }

func (p poolAddresses) Allocate(ctx context.Context, pool, serviceID string) (modules.Address, error) {
	a, err := p.s.Allocate(ctx, pool, serviceID)
	if err != nil {
		return modules.Address{}, err
	}
	out := modules.Address{CIDR: a.CIDR(), Nameservers: a.Nameservers}
	if a.Gateway.IsValid() {
		out.Gateway = a.Gateway.String()
	}
	return out, nil
}

func (p poolAddresses) Release(ctx context.Context, serviceID string) error {
	return p.s.Release(ctx, serviceID)
}
