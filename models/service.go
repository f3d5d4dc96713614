package models

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"time"

	"gorm.io/gorm"
)

// Service states (docs/api.md service.state).
const (
	ServiceProvisioning        = "provisioning"
	ServiceActive              = "active"
	ServiceSuspended           = "suspended"
	ServiceLimited             = "limited"
	ServiceTerminated          = "terminated"
	ServiceNeedsReconciliation = "needs_reconciliation"
	ServiceFailed              = "failed"
)

// Service is one customer guest managed by pvebill. It is unique on (ClientID, ServiceID) (R46)
// and on (Cluster, VMID) — never including the guest type (R1).
type Service struct {
	ID              int64  `gorm:"primaryKey"`
	ServiceID       string `gorm:"column:service_id"`
	ClientID        string
	Plan            string
	GuestType       string
	Cluster         string
	Node            string
	VMID            *int `gorm:"column:vmid"`
	Hostname        string
	State           string
	ParamsHash      string
	LockOperationID *string
	// LegacyStamp is set on the services that existed before service ids became per client
	// (R46): their guests may carry the one-part stamp that names the service id alone (R39).
	LegacyStamp bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// TableName pins the table.
func (Service) TableName() string { return "services" }

// InsertService writes a new service row; a duplicate (client_id, service_id) or (cluster, vmid) returns
// ErrDuplicate.
func InsertService(ctx context.Context, tx *gorm.DB, s *Service) error {
	now := Now()
	s.CreatedAt, s.UpdatedAt = now, now
	return tx.WithContext(ctx).Create(s).Error
}

// GetService finds a service by its key.
func GetService(ctx context.Context, tx *gorm.DB, k ServiceKey) (*Service, error) {
	var s Service
	err := pooled(ctx, tx).Where(keyCond, k.ClientID, k.ServiceID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &s, err
}

// serviceIPRow is one row of a service joined with one of the addresses it holds (none: a
// NULL address).
type serviceIPRow struct {
	Service       `gorm:"embedded"`
	HeldIPColumns `gorm:"embedded"`
}

// HeldIPColumns are an address a service holds as read with its pool (allocSelect), nil AllocIP
// for none; exported because gorm fills only exported embedded structs.
type HeldIPColumns struct {
	AllocIP   *int64  `gorm:"column:alloc_ip"`
	AllocCIDR *string `gorm:"column:alloc_cidr"`
	AllocBits *int    `gorm:"column:alloc_bits"`
	AllocGW   *string `gorm:"column:alloc_gw"`
}

// allocSelect reads HeldIPColumns's columns from ip_allocations joined with ip_pools.
const allocSelect = "ip_allocations.ip AS alloc_ip, ip_pools.cidr AS alloc_cidr, ip_pools.assign_prefix AS alloc_bits, ip_pools.gateway AS alloc_gw"

// held is the address an allocation row stands for: an IPv4 address, or an IPv6 prefix's
// guest address with the prefix and gateway (R54).
func (r HeldIPColumns) held() (HeldIP, error) {
	if r.AllocBits == nil || *r.AllocBits == 0 {
		return HeldIP{Addr: IPv4(*r.AllocIP)}, nil
	}
	cidr, err := netip.ParsePrefix(deref(r.AllocCIDR))
	if err != nil {
		return HeldIP{}, fmt.Errorf("pool cidr: %w", err)
	}
	p := IPv6Prefix(cidr, *r.AllocBits, *r.AllocIP)
	return HeldIP{Addr: IPv6Host(p), Prefix: p, Gateway: deref(r.AllocGW)}, nil
}

// HeldIP is an address a service holds. In an IPv6 pool (R54) Prefix is the assigned prefix,
// Addr the guest's address in it and Gateway the pool's gateway; in an IPv4 pool only Addr is set.
type HeldIP struct {
	Addr    netip.Addr
	Prefix  netip.Prefix
	Gateway string
}

// GetClientServiceWithIPs reads a client's service and the addresses it holds (an IPv6 one with
// its prefix, R54), in one statement: the service view is the most frequent read of the webhook
// path. Another client's service with the same id is not this one (R46): it is not found.
func GetClientServiceWithIPs(ctx context.Context, tx *gorm.DB, clientID, serviceID string) (*Service, []HeldIP, error) {
	var rows []serviceIPRow
	err := pooled(ctx, tx).Table("services").
		Select("services.*, "+allocSelect).
		Joins("LEFT JOIN ip_allocations ON ip_allocations.client_id = services.client_id AND ip_allocations.service_id = services.service_id").
		Joins("LEFT JOIN ip_pools ON ip_pools.name = ip_allocations.pool").
		Where("services.client_id = ? AND services.service_id = ?", clientID, serviceID).
		Order("ip_allocations.pool, ip_allocations.ip").
		Scan(&rows).Error
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, ErrNotFound
	}
	ips := make([]HeldIP, 0, len(rows))
	for _, r := range rows {
		if r.AllocIP == nil {
			continue
		}
		ip, err := r.held()
		if err != nil {
			return nil, nil, fmt.Errorf("service %s: %w", serviceID, err)
		}
		ips = append(ips, ip)
	}
	svc := rows[0].Service
	return &svc, ips, nil
}

// IPv6Prefix is the prefix of bits bits with this index inside the IPv6 network cidr: the index
// is added to the network's address at the prefix's boundary (R54).
func IPv6Prefix(cidr netip.Prefix, bits int, index int64) netip.Prefix {
	base := new(big.Int).SetBytes(cidr.Masked().Addr().AsSlice())
	off := new(big.Int).Lsh(big.NewInt(index), uint(128-bits))
	var b [16]byte
	base.Add(base, off).FillBytes(b[:])
	return netip.PrefixFrom(netip.AddrFrom16(b), bits)
}

// IPv6Host is the guest's address in an assigned prefix: the first host address (::1 of a /64),
// or the address itself for a /128.
func IPv6Host(p netip.Prefix) netip.Addr {
	if p.Bits() == 128 {
		return p.Addr()
	}
	return p.Addr().Next()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// IPv4 is the address an ip_allocations row stores as its 32-bit number.
func IPv4(v int64) netip.Addr {
	u := uint32(v)
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
}

// GetClientService finds a service that belongs to a client; another client's service with the
// same id is not this one (R46): it is not found.
func GetClientService(ctx context.Context, tx *gorm.DB, clientID, serviceID string) (*Service, error) {
	return GetService(ctx, tx, ServiceKey{ClientID: clientID, ServiceID: serviceID})
}

// ServiceOwners lists the clients that have a service with this id, in order (the admin scope
// addresses a service by its id and, when several clients share it, its client: docs/api.md).
func ServiceOwners(ctx context.Context, tx *gorm.DB, serviceID string) ([]string, error) {
	var out []string
	err := pooled(ctx, tx).Model(&Service{}).Where("service_id = ?", serviceID).Order("client_id").
		Pluck("client_id", &out).Error
	return out, err
}
