package server

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"pvebill/modules/ippool"
)

// IPPoolView is the API shape of an IP pool (docs/api.md IP pool) with its usage: size is the
// number of addresses in [first, last], used those allocated to services, free the rest.
type IPPoolView struct {
	Name    string  `json:"name"`
	Cluster string  `json:"cluster"`
	Bridge  string  `json:"bridge"`
	CIDR    string  `json:"cidr"`
	Gateway string  `json:"gateway"`
	First   *string `json:"first"` // null in an IPv6 pool (R54)
	Last    *string `json:"last"`
	Family  string  `json:"family"`
	// AssignPrefix is the length of the prefix an IPv6 pool assigns; null in an IPv4 pool.
	AssignPrefix *int     `json:"assign_prefix"`
	Nameservers  []string `json:"nameservers"`
	// ReverseZone is the zone of the pool's PTR records; null when the pool has none (R55).
	ReverseZone *string   `json:"reverse_zone"`
	Size        int64     `json:"size"`
	Used        int64     `json:"used"`
	Free        int64     `json:"free"`
	Source      string    `json:"source"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func ipPoolView(u ippool.Usage) IPPoolView {
	v := IPPoolView{Name: u.Name, Cluster: u.Cluster, Bridge: u.Bridge, CIDR: u.Prefix.String(),
		Gateway: u.Gateway.String(), Family: u.Family(),
		Nameservers: append([]string{}, u.Nameservers...), Size: u.Size(), Used: u.Used, Free: u.Free(),
		Source: string(u.Source), CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC()}
	if u.ReverseZone != "" {
		zone := u.ReverseZone
		v.ReverseZone = &zone
	}
	if u.IPv6() {
		bits := u.AssignPrefix
		v.AssignPrefix = &bits
	} else {
		first, last := u.First.String(), u.Last.String()
		v.First, v.Last = &first, &last
	}
	return v
}

func (s *Server) listIPPools(c *gin.Context) error {
	list, err := s.ipPools.List(c.Request.Context())
	if err != nil {
		return err
	}
	views := make([]IPPoolView, 0, len(list))
	for _, u := range list {
		views = append(views, ipPoolView(u))
	}
	writeJSON(c, http.StatusOK, gin.H{"ip_pools": views})
	return nil
}

// putIPPool creates (201) or replaces (200) a pool; the name in the path wins. A change that
// would leave allocated addresses outside the range is 409 ip_pool_in_use.
func (s *Server) putIPPool(c *gin.Context) error {
	var spec ippool.Spec
	if err := bindJSON(c, &spec); err != nil {
		return err
	}
	u, created, err := s.ipPools.Put(c.Request.Context(), c.Param("name"), spec)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(c, status, gin.H{"ip_pool": ipPoolView(u)})
	return nil
}

// deleteIPPool removes a pool (204); 409 ip_pool_in_use while addresses are allocated.
func (s *Server) deleteIPPool(c *gin.Context) error {
	if err := s.ipPools.Delete(c.Request.Context(), c.Param("name")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
