package ippool

import (
	"encoding/binary"
	"net/http"
	"net/netip"
	"pvebill/models"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"pvebill/i18n"
)

// Limits of a pool's fields.
const (
	// MaxNameservers is how many nameservers a pool may give: a resolver reads three.
	MaxNameservers = 3
	// maxClusterLen is the width of the cluster column.
	maxClusterLen = 64
)

// Formats of a pool's names. A bridge follows Proxmox's schema (`[-_.\w\d]+`; a Linux interface
// name has at most 15 bytes).
var (
	namePattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	bridgePattern = regexp.MustCompile(`^[-_.A-Za-z0-9]{1,15}$`)
)

// NameOK reports whether s has the shape of a pool name.
func NameOK(s string) bool { return namePattern.MatchString(s) }

// Source says where a saved pool came from.
type Source string

// Pool sources.
const (
	SourceFile Source = "file" // the config file's ip_pools, upserted at start
	SourceAPI  Source = "api"  // PUT /v1/admin/ip-pools/{name}
)

// Errors of allocation. They are problems the server answers as they are (never modify them);
// errors returned by a Service wrap them, so test with errors.Is. Their messages carry no
// parameters, because an operation's error is translated from its code alone.
var (
	// ErrPoolExhausted: every address of the pool's range is allocated (409, temporary).
	ErrPoolExhausted = i18n.NewProblem(http.StatusConflict, i18n.CodeIPPoolExhausted).Perm(i18n.Temporary)
	// ErrNoSuchPool: no pool has this name (404).
	ErrNoSuchPool = i18n.NewProblem(http.StatusNotFound, i18n.CodeIPPoolNotFound)
)

// Spec is a pool as written: the body of PUT /v1/admin/ip-pools/{name} and one entry of the
// config file's ip_pools. Validate turns it into a Pool.
type Spec struct {
	Name        string   `json:"name" yaml:"name"`
	Cluster     string   `json:"cluster" yaml:"cluster"`
	Bridge      string   `json:"bridge" yaml:"bridge"`
	CIDR        string   `json:"cidr" yaml:"cidr"`
	Gateway     string   `json:"gateway" yaml:"gateway"`
	First       string   `json:"first" yaml:"first"`
	Last        string   `json:"last" yaml:"last"`
	Nameservers []string `json:"nameservers" yaml:"nameservers"`
	// AssignPrefix is the length of the prefix an IPv6 pool gives each service (R54); nil means
	// 64. Not applicable to an IPv4 pool.
	AssignPrefix *int `json:"assign_prefix" yaml:"assign_prefix"`
	// ReverseZone is the reverse DNS zone of the pool's PTR records (R55, zone.go); "" = none.
	ReverseZone string `json:"reverse_zone" yaml:"reverse_zone"`
}

// Pool is a validated pool. An IPv6 pool (AssignPrefix > 0, R54) has no First/Last: it hands
// out the prefixes of AssignPrefix bits with an index in [FirstIndex, LastIndex] inside Prefix.
type Pool struct {
	Name    string
	Cluster string
	Bridge  string
	Prefix  netip.Prefix // the network, canonical
	Gateway netip.Addr
	First   netip.Addr // the allocation range, inclusive
	Last    netip.Addr
	// AssignPrefix, FirstIndex and LastIndex describe an IPv6 pool; AssignPrefix is 0 in an
	// IPv4 pool.
	AssignPrefix int
	FirstIndex   int64
	LastIndex    int64
	Nameservers  []string // never nil
	// ReverseZone is the reverse DNS zone of the pool's PTR records ("" = none, R55).
	ReverseZone string
	Source      Source
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Size is the number of addresses (IPv6: prefixes) in the allocation range.
func (p Pool) Size() int64 {
	if p.IPv6() {
		return p.LastIndex - p.FirstIndex + 1
	}
	return int64(toUint(p.Last)) - int64(toUint(p.First)) + 1
}

// IPv6 reports whether the pool assigns IPv6 prefixes.
func (p Pool) IPv6() bool { return p.AssignPrefix > 0 }

// Family is "ipv4" or "ipv6", from the cidr.
func (p Pool) Family() string {
	if p.IPv6() {
		return "ipv6"
	}
	return "ipv4"
}

// Usage is a pool with the number of its allocated addresses.
type Usage struct {
	Pool
	Used int64
}

// Free is the number of addresses still free.
func (u Usage) Free() int64 { return u.Size() - u.Used }

// Address is an address allocated to a service, with what its guest needs to use it.
type Address struct {
	Pool        string
	IP          netip.Addr
	PrefixLen   int
	Gateway     netip.Addr
	Nameservers []string
	Bridge      string
	// Assigned is the prefix assigned to the service in an IPv6 pool (R54); IP is its first
	// host address (the address itself for a /128). Not valid for IPv4.
	Assigned netip.Prefix
}

// CIDR is the address with its prefix length, as Proxmox's ip= and ip6= take it
// ("203.0.113.10/24", "2001:db8:0:1::1/64").
func (a Address) CIDR() string { return netip.PrefixFrom(a.IP, a.PrefixLen).String() }

// address builds the Address of an allocation's stored value in p: an IPv4 address, or the
// index of an IPv6 prefix.
func (p Pool) address(v int64) Address {
	a := Address{Pool: p.Name, PrefixLen: p.Prefix.Bits(), Gateway: p.Gateway,
		Nameservers: slices.Clone(p.Nameservers), Bridge: p.Bridge}
	if !p.IPv6() {
		a.IP = models.IPv4(v)
		return a
	}
	a.Assigned = models.IPv6Prefix(p.Prefix, p.AssignPrefix, v)
	a.IP, a.PrefixLen = models.IPv6Host(a.Assigned), p.AssignPrefix
	return a
}

func toUint(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

// Validate checks a Spec and returns the Pool it describes. clusters are the configured
// cluster names a pool may name; empty accepts any. A failure is a 422 validation_failed
// problem listing every bad field, ordered by field name.
func Validate(spec Spec, clusters []string) (Pool, error) {
	var v fieldErrors
	v.names(spec, clusters)
	var p Pool
	if pr, err := netip.ParsePrefix(spec.CIDR); err == nil && pr.Addr().Is6() && !pr.Addr().Is4In6() {
		p = v.addresses6(spec)
	} else {
		p.Prefix, p.Gateway, p.First, p.Last = v.addresses(spec)
		if spec.AssignPrefix != nil {
			v.Add("assign_prefix", i18n.FieldNotForFamily, "ipv4")
		}
	}
	nameservers := v.nameservers(spec.Nameservers)
	p.ReverseZone = v.reverseZone(spec.ReverseZone, p.Prefix)
	if prob := v.Problem(); prob != nil {
		return Pool{}, prob
	}
	p.Name, p.Cluster, p.Bridge, p.Nameservers = spec.Name, spec.Cluster, spec.Bridge, nameservers
	return p, nil
}

// names checks the pool's name, cluster and bridge.
func (v *fieldErrors) names(spec Spec, clusters []string) {
	switch {
	case spec.Name == "":
		v.Add("name", i18n.FieldRequired, "")
	case !NameOK(spec.Name):
		v.Add("name", i18n.FieldPattern, "")
	}
	switch {
	case spec.Cluster == "":
		v.Add("cluster", i18n.FieldRequired, "")
	case len(spec.Cluster) > maxClusterLen:
		v.Add("cluster", i18n.FieldTooLong, strconv.Itoa(maxClusterLen))
	case len(clusters) > 0 && !slices.Contains(clusters, spec.Cluster):
		sorted := slices.Clone(clusters)
		sort.Strings(sorted)
		v.Add("cluster", i18n.FieldOneOf, strings.Join(sorted, ", "))
	}
	switch {
	case spec.Bridge == "":
		v.Add("bridge", i18n.FieldRequired, "")
	case len(spec.Bridge) > 15:
		v.Add("bridge", i18n.FieldTooLong, "15")
	case !bridgePattern.MatchString(spec.Bridge):
		v.Add("bridge", i18n.FieldPattern, "")
	}
}

// addresses reads the network, gateway and range, each inside the network, the range not
// reversed and the gateway outside it.
func (v *fieldErrors) addresses(spec Spec) (prefix netip.Prefix, gw, first, last netip.Addr) {
	prefix, prefixOK := parsePrefix(v, spec.CIDR)
	gw, gwOK := parseAddr(v, "gateway", spec.Gateway)
	first, firstOK := parseAddr(v, "first", spec.First)
	last, lastOK := parseAddr(v, "last", spec.Last)
	if prefixOK {
		gwOK = gwOK && v.inNetwork("gateway", gw, prefix)
		firstOK = firstOK && v.inNetwork("first", first, prefix)
		lastOK = lastOK && v.inNetwork("last", last, prefix)
	}
	if firstOK && lastOK && toUint(last) < toUint(first) {
		v.Add("last", i18n.FieldTooSmall, first.String())
		lastOK = false
	}
	if gwOK && firstOK && lastOK && toUint(gw) >= toUint(first) && toUint(gw) <= toUint(last) {
		v.Add("gateway", i18n.FieldInsideRange, first.String()+"–"+last.String())
	}
	return prefix, gw, first, last
}

// nameservers reads at most MaxNameservers addresses, IPv4 or IPv6, canonical and distinct.
func (v *fieldErrors) nameservers(list []string) []string {
	nameservers := make([]string, 0, len(list))
	if len(list) > MaxNameservers {
		v.Add("nameservers", i18n.FieldTooLong, strconv.Itoa(MaxNameservers))
		return nameservers
	}
	seen := map[netip.Addr]bool{}
	for i, s := range list {
		field := "nameservers[" + strconv.Itoa(i) + "]"
		a, err := netip.ParseAddr(s)
		switch {
		case s == "":
			v.Add(field, i18n.FieldRequired, "")
		case err != nil || a.Zone() != "":
			v.Add(field, i18n.FieldPattern, "")
		case a.String() != s:
			v.Add(field, i18n.FieldNotCanonical, a.String())
		case seen[a]:
			v.Add(field, i18n.FieldDuplicate, "")
		default:
			seen[a] = true
			nameservers = append(nameservers, a.String())
		}
	}
	return nameservers
}

// parsePrefix reads the cidr field: an IPv4 network written canonically.
func parsePrefix(v *fieldErrors, s string) (netip.Prefix, bool) {
	if s == "" {
		v.Add("cidr", i18n.FieldRequired, "")
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		v.Add("cidr", i18n.FieldPattern, "")
	case !p.Addr().Is4():
		v.Add("cidr", i18n.FieldNotIPv4, "")
	case p.Masked() != p:
		v.Add("cidr", i18n.FieldNotCanonical, p.Masked().String())
	default:
		return p, true
	}
	return netip.Prefix{}, false
}

// parseAddr reads an IPv4 address field written canonically (no IPv4-mapped IPv6 form).
func parseAddr(v *fieldErrors, field, s string) (netip.Addr, bool) {
	if s == "" {
		v.Add(field, i18n.FieldRequired, "")
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		v.Add(field, i18n.FieldPattern, "")
	case !a.Is4():
		v.Add(field, i18n.FieldNotIPv4, "")
	case a.String() != s:
		v.Add(field, i18n.FieldNotCanonical, a.String())
	default:
		return a, true
	}
	return netip.Addr{}, false
}

// inNetwork checks that a is a host address of p: inside it, and neither its network nor its
// broadcast address (a /31 or /32 has neither, RFC 3021).
func (v *fieldErrors) inNetwork(field string, a netip.Addr, p netip.Prefix) bool {
	if !p.Contains(a) {
		v.Add(field, i18n.FieldOutsideNetwork, p.String())
		return false
	}
	if p.Bits() <= 30 {
		network := toUint(p.Addr())
		broadcast := network | (1<<(32-p.Bits()) - 1)
		if x := toUint(a); x == network || x == broadcast {
			v.Add(field, i18n.FieldReservedAddress, p.String())
			return false
		}
	}
	return true
}

// fieldErrors collects field failures, at most one per field.
type fieldErrors struct{ i18n.FieldErrors }
