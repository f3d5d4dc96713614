package provision

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// ServiceView is the API shape of a service (docs/api.md Objects).
type ServiceView struct {
	ServiceID   string         `json:"service_id"`
	Plan        string         `json:"plan"`
	GuestType   string         `json:"guest_type"`
	Cluster     string         `json:"cluster"`
	Node        *string        `json:"node"`
	VMID        *int           `json:"vmid"`
	Hostname    string         `json:"hostname"`
	State       string         `json:"state"`
	Power       string         `json:"power"`
	IPAddresses []string       `json:"ip_addresses"`
	IPv6        *IPv6View      `json:"ipv6"`
	Monitoring  MonitoringView `json:"monitoring"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// IPv6View is the service's IPv6 assignment (R54): the prefix, the guest's address in it and
// the pool's gateway.
type IPv6View struct {
	Prefix  string `json:"prefix"`
	Address string `json:"address"`
	Gateway string `json:"gateway"`
}

// MonitoringView holds live figures; each is null where unknown or not applicable (R14).
type MonitoringView struct {
	CPU            *float64 `json:"cpu"`
	MemoryBytes    *int64   `json:"memory_bytes"`
	MemoryMaxBytes *int64   `json:"memory_max_bytes"`
	DiskBytes      *int64   `json:"disk_bytes"`
	DiskMaxBytes   *int64   `json:"disk_max_bytes"`
	SwapBytes      *int64   `json:"swap_bytes"`
	SwapMaxBytes   *int64   `json:"swap_max_bytes"`
	NetinBytes     *int64   `json:"netin_bytes"`
	NetoutBytes    *int64   `json:"netout_bytes"`
	UptimeSeconds  *int64   `json:"uptime_seconds"`
	GuestAgent     *bool    `json:"guest_agent"`
}

// Get returns a service the client may see, with live power and monitoring from one status
// call. When Proxmox cannot be asked, power is "unknown" and every figure null.
func (s *Provisioner) Get(ctx context.Context, clientID, serviceID string) (ServiceView, error) {
	svc, ips, err := s.db.GetClientServiceWithIPs(ctx, clientID, serviceID)
	if err != nil {
		return ServiceView{}, operation.ServiceNotFound(err)
	}
	v := storedView(svc, ips)
	if svc.State == models.ServiceTerminated || svc.VMID == nil || svc.Node == "" {
		return v, nil
	}
	cl, err := s.clusters.Get(svc.Cluster)
	if err != nil {
		s.log.Warn("service on an unknown cluster: stored view only", "service_id", svc.ServiceID, "err", err)
		return v, nil
	}
	mod, err := s.guests.Module(svc.GuestType)
	if err != nil {
		s.log.Warn("service of an unknown guest type: stored view only", "service_id", svc.ServiceID, "err", err)
		return v, nil
	}
	g := operation.ServiceGuest(cl, svc, svc.Node)
	st, err := mod.Status(ctx, g)
	if errors.Is(err, kinds.ErrNotFound) {
		st, err = s.followMoved(ctx, cl, mod, svc, g, &v)
	}
	if err != nil {
		s.log.Warn("read guest status", "service_id", svc.ServiceID, "err", err)
		return v, nil
	}
	v.Power = st.Power
	v.Monitoring = MonitoringView{CPU: st.CPU, MemoryBytes: st.MemoryBytes, MemoryMaxBytes: st.MemoryMaxBytes,
		DiskBytes: st.DiskBytes, DiskMaxBytes: st.DiskMaxBytes, SwapBytes: st.SwapBytes, SwapMaxBytes: st.SwapMaxBytes,
		NetinBytes: st.NetInBytes, NetoutBytes: st.NetOutBytes, UptimeSeconds: st.UptimeSeconds, GuestAgent: st.GuestAgent}
	return v, nil
}

// followMoved finds a guest that is no longer on the service's node (migrated in Proxmox's own
// interface, or moved by HA: R53) by its vmid, records its node and reads its status there. A
// guest of another kind at the vmid is not the service's; the view then stays the stored one.
func (s *Provisioner) followMoved(ctx context.Context, cl kinds.Cluster, mod kinds.Module, svc *models.Service,
	g kinds.Guest, v *ServiceView) (kinds.Status, error) {
	at, err := s.mods.Locate(ctx, cl, g.VMID)
	if err != nil {
		return kinds.Status{}, err
	}
	if !at.Found || at.Kind != mod.Kind() || at.Node == g.Node {
		return kinds.Status{}, fmt.Errorf("guest %d not found on %s: %w", g.VMID, g.Node, kinds.ErrNotFound)
	}
	if err := s.db.UpdateService(ctx, svc.Key(), map[string]any{"node": at.Node}); err != nil {
		return kinds.Status{}, err
	}
	s.log.Info("guest found on another node; the service follows it", "service_id", svc.ServiceID,
		"vmid", g.VMID, "from", g.Node, "to", at.Node)
	node := at.Node
	v.Node = &node
	g.Node = at.Node
	return mod.Status(ctx, g)
}

// storedView is a service's view from its row and the addresses it holds, without asking
// Proxmox: power "unknown" (a terminated service's "stopped") and every monitoring figure null.
func storedView(svc *models.Service, ips []models.HeldIP) ServiceView {
	v := ServiceView{ServiceID: svc.ServiceID, Plan: svc.Plan, GuestType: svc.GuestType, Cluster: svc.Cluster,
		VMID: svc.VMID, Hostname: svc.Hostname, State: svc.State, Power: "unknown", IPAddresses: []string{},
		CreatedAt: svc.CreatedAt.UTC(), UpdatedAt: svc.UpdatedAt.UTC()}
	if svc.Node != "" {
		n := svc.Node
		v.Node = &n
	}
	if svc.State == models.ServiceTerminated {
		v.Power = "stopped"
		return v
	}
	for _, ip := range ips {
		v.IPAddresses = append(v.IPAddresses, ip.Addr.String())
		if ip.Prefix.IsValid() && v.IPv6 == nil {
			v.IPv6 = &IPv6View{Prefix: ip.Prefix.String(), Address: ip.Addr.String(), Gateway: ip.Gateway}
		}
	}
	return v
}

// MaxListPage is the most services one page of List holds (docs/api.md "GET /v1/services").
const MaxListPage = 1000

// ServicePage is one page of a client's services: the GET /v1/services answer.
type ServicePage struct {
	Services   []ServiceView `json:"services"`
	NextCursor *string       `json:"next_cursor"`
}

// List pages a client's own services (R46) in service id order from the database alone: no
// live power or monitoring, so a billing system's sync of thousands of services sends nothing
// to Proxmox. after is the previous page's next_cursor ("" for the first page).
func (s *Provisioner) List(ctx context.Context, clientID, after string, limit int) (ServicePage, error) {
	rows, err := s.db.ListClientServices(ctx, clientID, after, limit)
	if err != nil {
		return ServicePage{}, err
	}
	page := ServicePage{Services: make([]ServiceView, 0, len(rows.Services))}
	for i := range rows.Services {
		page.Services = append(page.Services, storedView(&rows.Services[i], rows.IPs[rows.Services[i].ServiceID]))
	}
	if rows.More {
		next := rows.Services[len(rows.Services)-1].ServiceID
		page.NextCursor = &next
	}
	return page, nil
}

// GuestView is one guest of a cluster in the admin listing.
type GuestView struct {
	Cluster   string  `json:"cluster"`
	Node      string  `json:"node"`
	VMID      int     `json:"vmid"`
	GuestType string  `json:"guest_type"`
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	Template  bool    `json:"template"`
	ServiceID *string `json:"service_id"`
	ClientID  *string `json:"client_id"` // the managing service's client (R46)
}

// Guests lists every guest of every cluster from /cluster/resources?type=vm, the guest type
// read from each row's type (R3), with the managing service when there is one.
func (s *Provisioner) Guests(ctx context.Context) ([]GuestView, error) {
	out := []GuestView{}
	for _, name := range s.names {
		cl := s.clusters[name]
		rows, err := cl.Resources(ctx, "vm")
		if err != nil {
			return nil, operation.ProblemOf(fmt.Errorf("list guests of %s: %w", name, err))
		}
		owners, err := s.db.ServiceVMIDs(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			kind := s.mods.KindOf(r.Type)
			if kind == "" {
				continue
			}
			g := GuestView{Cluster: name, Node: r.Node, VMID: r.VMID.Int(), GuestType: string(kind), Name: r.Name,
				Status: r.Status, Template: bool(r.Template)}
			if k, ok := owners[g.VMID]; ok {
				g.ServiceID, g.ClientID = &k.ServiceID, &k.ClientID
			}
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].VMID < out[j].VMID
	})
	return out, nil
}
