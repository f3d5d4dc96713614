package ippool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"

	"pvebill/i18n"
	"pvebill/models"
)

// maxServiceIDLen is the width of ip_allocations.service_id (and of a service id, docs/api.md).
const maxServiceIDLen = 64

// Service keeps the pools and their allocations in the database. Every write is validated
// first; nothing invalid is ever stored.
type Service struct {
	db       *models.DB
	clusters []string
}

// NewService returns a Service over db that accepts any cluster name.
func NewService(db *models.DB) *Service { return &Service{db: db} }

// WithClusters returns a copy of s that accepts only pools on these clusters (the configured
// ones); an empty list accepts any name.
func (s *Service) WithClusters(names []string) *Service {
	c := *s
	c.clusters = slices.Clone(names)
	return &c
}

// Validate checks a Spec against the accepted clusters (see the package function Validate).
func (s *Service) Validate(spec Spec) (Pool, error) { return Validate(spec, s.clusters) }

// Put validates spec as the pool with this name and saves it (source api), reporting whether
// it was created. The name in the path wins: a spec naming another name is refused, one naming
// none takes this one. A change that would leave allocated addresses outside the range is
// refused with 409 ip_pool_in_use and nothing is written.
func (s *Service) Put(ctx context.Context, name string, spec Spec) (Usage, bool, error) {
	if spec.Name != "" && spec.Name != name {
		return Usage{}, false, i18n.Validation(i18n.FieldError{Field: "name", Code: i18n.FieldOneOf, Param: name})
	}
	spec.Name = name
	p, err := s.Validate(spec)
	if err != nil {
		return Usage{}, false, err
	}
	created, err := s.save(ctx, []Pool{p}, SourceAPI)
	if err != nil {
		return Usage{}, false, err
	}
	u, err := s.Get(ctx, name)
	return u, created[0], err
}

// Import validates every spec and, only if all are valid and their names distinct, saves them
// in one transaction with the given source (the config file's ip_pools at start). Pools stored
// before and not named here are left alone. The error names the entry that was refused.
func (s *Service) Import(ctx context.Context, specs []Spec, src Source) ([]Pool, error) {
	pools := make([]Pool, 0, len(specs))
	seen := map[string]int{}
	for i, spec := range specs {
		p, err := s.Validate(spec)
		if err != nil {
			return nil, fmt.Errorf("ip_pools[%d] (%s): %w", i, spec.Name, err)
		}
		if j, dup := seen[spec.Name]; dup {
			return nil, fmt.Errorf("ip_pools[%d] (%s): the same name as ip_pools[%d]", i, spec.Name, j)
		}
		seen[spec.Name] = i
		pools = append(pools, p)
	}
	if len(pools) == 0 {
		return pools, nil
	}
	if _, err := s.save(ctx, pools, src); err != nil {
		return nil, fmt.Errorf("ip_pools: %w", err)
	}
	return pools, nil
}

func (s *Service) save(ctx context.Context, pools []Pool, src Source) ([]bool, error) {
	rows := make([]models.IPPool, 0, len(pools))
	for _, p := range pools {
		ns, err := json.Marshal(p.Nameservers)
		if err != nil {
			return nil, fmt.Errorf("encode nameservers of %s: %w", p.Name, err)
		}
		row := models.IPPool{Name: p.Name, Cluster: p.Cluster, Bridge: p.Bridge, CIDR: p.Prefix.String(),
			Gateway: p.Gateway.String(), FirstIP: p.FirstIndex, LastIP: p.LastIndex, AssignPrefix: p.AssignPrefix,
			Nameservers: string(ns), ReverseZone: p.ReverseZone}
		if !p.IPv6() {
			row.FirstIP, row.LastIP = int64(toUint(p.First)), int64(toUint(p.Last))
		}
		rows = append(rows, row)
	}
	created, err := s.db.SaveIPPools(ctx, rows, string(src))
	var inUse *models.IPPoolInUseError
	if errors.As(err, &inUse) {
		return nil, inUseProblem(inUse)
	}
	if err != nil {
		return nil, fmt.Errorf("save ip pools: %w", err)
	}
	return created, nil
}

func inUseProblem(e *models.IPPoolInUseError) error {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeIPPoolInUse).Perm(i18n.Temporary).
		With("pool", e.Pool).With("count", strconv.FormatInt(e.Count, 10)).Wrap(e)
}

// List returns every pool with its usage, ordered by name.
func (s *Service) List(ctx context.Context) ([]Usage, error) {
	rows, err := s.db.ListIPPools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list ip pools: %w", err)
	}
	used, err := s.db.CountIPAllocations(ctx)
	if err != nil {
		return nil, fmt.Errorf("count ip allocations: %w", err)
	}
	out := make([]Usage, 0, len(rows))
	for _, r := range rows {
		p, err := decodeRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, Usage{Pool: p, Used: used[r.Name]})
	}
	return out, nil
}

// Get returns one pool with its usage; ErrNoSuchPool when there is none.
func (s *Service) Get(ctx context.Context, name string) (Usage, error) {
	row, err := s.db.GetIPPool(ctx, name)
	if errors.Is(err, models.ErrNotFound) {
		return Usage{}, fmt.Errorf("get ip pool %s: %w", name, ErrNoSuchPool)
	}
	if err != nil {
		return Usage{}, fmt.Errorf("get ip pool %s: %w", name, err)
	}
	p, err := decodeRow(*row)
	if err != nil {
		return Usage{}, err
	}
	var used int64
	if err := s.db.WithContext(ctx).Model(&models.IPAllocation{}).Where("pool = ?", name).Count(&used).Error; err != nil {
		return Usage{}, fmt.Errorf("count ip allocations of %s: %w", name, err)
	}
	return Usage{Pool: p, Used: used}, nil
}

// Delete removes a pool: ErrNoSuchPool when there is none, 409 ip_pool_in_use while any of its
// addresses is allocated.
func (s *Service) Delete(ctx context.Context, name string) error {
	err := s.db.DeleteIPPool(ctx, name)
	var inUse *models.IPPoolInUseError
	switch {
	case errors.Is(err, models.ErrNotFound):
		return fmt.Errorf("delete ip pool %s: %w", name, ErrNoSuchPool)
	case errors.As(err, &inUse):
		return inUseProblem(inUse)
	case err != nil:
		return fmt.Errorf("delete ip pool %s: %w", name, err)
	}
	return nil
}

// Allocate gives a service an address of pool: the address it already holds there, or the
// lowest free one. ErrNoSuchPool when the pool does not exist, ErrPoolExhausted when every
// address is taken.
func (s *Service) Allocate(ctx context.Context, pool string, k models.ServiceKey) (Address, error) {
	if k.ServiceID == "" || len(k.ServiceID) > maxServiceIDLen {
		return Address{}, fmt.Errorf("allocate in pool %s: service id %q: %w", pool, k.ServiceID,
			i18n.Validation(i18n.FieldError{Field: "service_id", Code: i18n.FieldPattern}))
	}
	alloc, row, err := s.db.AllocateIP(ctx, pool, k)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return Address{}, fmt.Errorf("allocate in pool %s: %w", pool, ErrNoSuchPool)
	case errors.Is(err, models.ErrIPPoolFull):
		return Address{}, fmt.Errorf("allocate in pool %s: %w", pool, ErrPoolExhausted)
	case err != nil:
		return Address{}, fmt.Errorf("allocate in pool %s: %w", pool, err)
	}
	p, err := decodeRow(row)
	if err != nil {
		return Address{}, err
	}
	return p.address(alloc.IP), nil
}

// Lookup returns the addresses a service holds, one per pool, ordered by pool name (none:
// an empty list).
func (s *Service) Lookup(ctx context.Context, k models.ServiceKey) ([]Address, error) {
	allocs, pools, err := s.db.ServiceIPAllocations(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("look up addresses of %s: %w", k.ServiceID, err)
	}
	out := make([]Address, 0, len(allocs))
	for _, a := range allocs {
		row, ok := pools[a.Pool]
		if !ok {
			return nil, fmt.Errorf("address %d of %s: pool %s vanished", a.IP, k.ServiceID, a.Pool)
		}
		p, err := decodeRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, p.address(a.IP))
	}
	return out, nil
}

// Release frees every address the service holds. Releasing a service that holds none is not
// an error.
func (s *Service) Release(ctx context.Context, k models.ServiceKey) error {
	if _, err := s.db.ReleaseIPs(ctx, k); err != nil {
		return fmt.Errorf("release addresses of %s: %w", k.ServiceID, err)
	}
	return nil
}

// decodeRow turns a stored row back into a Pool.
func decodeRow(r models.IPPool) (Pool, error) {
	prefix, err := netip.ParsePrefix(r.CIDR)
	if err != nil {
		return Pool{}, fmt.Errorf("decode ip pool %s: cidr: %w", r.Name, err)
	}
	gw, err := netip.ParseAddr(r.Gateway)
	if err != nil {
		return Pool{}, fmt.Errorf("decode ip pool %s: gateway: %w", r.Name, err)
	}
	if r.FirstIP < 0 || (r.AssignPrefix == 0 && r.LastIP > 1<<32-1) || r.FirstIP > r.LastIP {
		return Pool{}, fmt.Errorf("decode ip pool %s: range %d–%d", r.Name, r.FirstIP, r.LastIP)
	}
	ns := []string{}
	if err := json.Unmarshal([]byte(r.Nameservers), &ns); err != nil {
		return Pool{}, fmt.Errorf("decode ip pool %s: nameservers: %w", r.Name, err)
	}
	if ns == nil {
		ns = []string{}
	}
	p := Pool{Name: r.Name, Cluster: r.Cluster, Bridge: r.Bridge, Prefix: prefix, Gateway: gw,
		AssignPrefix: r.AssignPrefix, Nameservers: ns, ReverseZone: r.ReverseZone,
		Source: Source(r.Source), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if p.IPv6() {
		p.FirstIndex, p.LastIndex = r.FirstIP, r.LastIP
	} else {
		p.First, p.Last = models.IPv4(r.FirstIP), models.IPv4(r.LastIP)
	}
	return p, nil
}
