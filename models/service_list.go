package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// ClientServicePage is one page of a client's services in service id order, with the IPv4
// addresses each holds, and whether more services follow the page.
type ClientServicePage struct {
	Services []Service
	IPs      map[string][]HeldIP // by service id
	More     bool
}

// ListClientServices reads at most limit of a client's services whose id sorts after after
// ("" for the first page), in two statements whatever the page's size: the services, then the
// addresses they hold. Another client's services are never read (R46).
func ListClientServices(ctx context.Context, tx *gorm.DB, clientID, after string, limit int) (ClientServicePage, error) {
	page := ClientServicePage{IPs: map[string][]HeldIP{}}
	q := pooled(ctx, tx).Where("client_id = ?", clientID)
	if after != "" {
		q = q.Where("service_id > ?", after)
	}
	if err := q.Order("service_id").Limit(limit + 1).Find(&page.Services).Error; err != nil {
		return page, err
	}
	if len(page.Services) > limit {
		page.Services, page.More = page.Services[:limit], true
	}
	if len(page.Services) == 0 {
		return page, nil
	}
	ids := make([]string, len(page.Services))
	for i, s := range page.Services {
		ids[i] = s.ServiceID
	}
	var allocs []struct {
		ServiceID     string `gorm:"column:service_id"`
		HeldIPColumns `gorm:"embedded"`
	}
	err := pooled(ctx, tx).Table("ip_allocations").Select("ip_allocations.service_id, "+allocSelect).
		Joins("JOIN ip_pools ON ip_pools.name = ip_allocations.pool").
		Where("ip_allocations.client_id = ? AND ip_allocations.service_id IN ?", clientID, ids).
		Order("ip_allocations.service_id, ip_allocations.pool, ip_allocations.ip").Scan(&allocs).Error
	if err != nil {
		return page, err
	}
	for _, a := range allocs {
		ip, err := a.held()
		if err != nil {
			return page, fmt.Errorf("service %s: %w", a.ServiceID, err)
		}
		page.IPs[a.ServiceID] = append(page.IPs[a.ServiceID], ip)
	}
	return page, nil
}
