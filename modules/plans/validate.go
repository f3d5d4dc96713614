package plans

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"pvebill/i18n"
	"pvebill/modules/pve/pveconf"
	"pvebill/modules/validation"
)

// Formats of a plan's names. The Proxmox ones follow the API schema (pve-apidoc): a bridge is
// `[-_.\w\d]+` (and a Linux interface name has at most 15 bytes), a node is pve-node.
var (
	codePattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	osNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)
	poolPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	bridgePattern = regexp.MustCompile(`^[-_.A-Za-z0-9]{1,15}$`)
	nodePattern   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// CodeOK reports whether s has the shape of a plan code.
func CodeOK(s string) bool { return codePattern.MatchString(s) }

// Clusters describes the configured clusters a plan may name: cluster name → the nodes pvebill
// may place guests on there (empty: every online node). A nil Clusters accepts any names.
type Clusters map[string][]string

// Validate checks a Spec and returns the Plan it describes, every value explicit. A failure is
// an *i18n.Problem: 422 validation_failed listing every bad field, or the refusal the kind's
// rules give a plan that offers that kind alone (KindRules.RefuseAlone: a container plan that
// asks for a pause suspend mode is not_possible_for_container, R15).
func Validate(spec Spec, clusters Clusters) (Plan, error) {
	v := &fieldErrors{}
	v.tags(spec)
	v.domain(spec, clusters)
	if p := v.Problem(); p != nil {
		return Plan{}, p
	}
	if len(spec.GuestTypes) == 1 {
		if err := rulesOf(spec.GuestTypes[0]).RefuseAlone(spec); err != nil {
			return Plan{}, err
		}
	}
	return normalize(spec), nil
}

// normalize fills every default of a valid Spec.
func normalize(s Spec) Plan {
	p := Plan{
		Code: s.Code, Name: s.Name, Cluster: s.Cluster, Cores: *s.Cores, MemoryMiB: *s.MemoryMiB, DiskGiB: *s.DiskGiB,
		Storage: s.Storage, Bridge: s.Bridge, VMSuspendMode: s.VMSuspendMode, VMClone: s.VMClone,
		Nodes: append([]string{}, s.Nodes...),
	}
	for _, t := range GuestTypes {
		if slices.Contains(s.GuestTypes, t) {
			p.GuestTypes = append(p.GuestTypes, t)
		}
	}
	if s.SwapMiB != nil {
		p.SwapMiB = *s.SwapMiB
	}
	if s.SnapshotsMax != nil {
		p.SnapshotsMax = *s.SnapshotsMax
	}
	if s.BandwidthGiB != nil {
		b := *s.BandwidthGiB
		p.BandwidthGiB = &b
	}
	if s.RateMbps != nil {
		r := *s.RateMbps
		p.RateMbps = &r
	}
	if s.IPPool != nil {
		ip := *s.IPPool
		p.IPPool = &ip
	}
	if s.IP6Pool != nil {
		ip := *s.IP6Pool
		p.IP6Pool = &ip
	}
	if p.VMSuspendMode == "" {
		p.VMSuspendMode = SuspendStop
	}
	if p.VMClone == "" {
		p.VMClone = CloneFull
	}
	normalizeBackups(s, &p)
	if len(s.OS.Container) > 0 {
		p.OS.Container = make(map[string]string, len(s.OS.Container))
		for k, v := range s.OS.Container {
			p.OS.Container[k] = v
		}
	}
	if len(s.OS.VM) > 0 {
		p.OS.VM = make(map[string]VMTemplate, len(s.OS.VM))
		for k, v := range s.OS.VM {
			p.OS.VM[k] = v
		}
	}
	return p
}

// fieldErrors collects field failures, at most one per field.
type fieldErrors struct{ i18n.FieldErrors }

// tags runs the validator over the struct tags (the same rules and codes as the HTTP layer's).
func (v *fieldErrors) tags(spec Spec) {
	fields, err := validation.Struct(spec)
	if err != nil {
		panic(err) // a Spec is a struct: a wiring mistake
	}
	for _, f := range fields {
		v.Add(f.Field, f.Code, f.Param)
	}
}

// domain checks what struct tags cannot say: name formats, the configured clusters and nodes,
// the OS catalogs, and fields that do not apply to the offered guest types.
func (v *fieldErrors) domain(s Spec, clusters Clusters) {
	v.names(s)
	v.placement(s, clusters)
	v.backups(s)
	offered := make([]string, 0, 2)
	for _, t := range GuestTypes {
		if slices.Contains(s.GuestTypes, t) {
			offered = append(offered, string(t))
		}
	}
	// The rest depends on the offered types: judge it only when those are valid.
	if len(offered) == 0 || len(offered) != len(s.GuestTypes) {
		return
	}
	v.byGuestType(s, strings.Join(offered, ", "))
}

// names checks the formats of the plan's code, storage, bridge and IP pool names.
func (v *fieldErrors) names(s Spec) {
	switch {
	case s.Code == "":
		v.Add("code", i18n.FieldRequired, "")
	case !v.Has("code") && !CodeOK(s.Code):
		v.Add("code", i18n.FieldPattern, "")
	}
	if s.Storage != "" && !v.Has("storage") && !pveconf.ValidStorageID(s.Storage) {
		v.Add("storage", i18n.FieldPattern, "")
	}
	if s.Bridge != "" && !v.Has("bridge") && !bridgePattern.MatchString(s.Bridge) {
		v.Add("bridge", i18n.FieldPattern, "")
	}
	if s.IPPool != nil && !v.Has("ip_pool") && !poolPattern.MatchString(*s.IPPool) {
		v.Add("ip_pool", i18n.FieldPattern, "")
	}
	if s.IP6Pool != nil && !v.Has("ip6_pool") && !poolPattern.MatchString(*s.IP6Pool) {
		v.Add("ip6_pool", i18n.FieldPattern, "")
	}
}

// placement checks the cluster against the configured ones and the nodes against its nodes.
func (v *fieldErrors) placement(s Spec, clusters Clusters) {
	var allowedNodes []string
	if s.Cluster != "" && !v.Has("cluster") && clusters != nil {
		nodes, ok := clusters[s.Cluster]
		if !ok {
			v.Add("cluster", i18n.FieldOneOf, strings.Join(sortedKeys(clusters), ", "))
		}
		allowedNodes = nodes
	}
	if v.Has("nodes") {
		return
	}
	for i, n := range s.Nodes {
		field := "nodes[" + strconv.Itoa(i) + "]"
		switch {
		case v.Has(field):
		case !nodePattern.MatchString(n):
			v.Add(field, i18n.FieldPattern, "")
		case len(allowedNodes) > 0 && !slices.Contains(allowedNodes, n):
			v.Add(field, i18n.FieldOneOf, strings.Join(allowedNodes, ", "))
		}
	}
}

// byGuestType checks what depends on the offered guest types (offeredList names them): each
// offered kind judges its own fields (its OS catalog), and a field that only kinds the plan
// does not offer use is refused as not applicable (a swap the customer would see but never
// get, R5).
func (v *fieldErrors) byGuestType(s Spec, offeredList string) {
	used := map[string]bool{}
	for _, t := range s.GuestTypes {
		kind := rulesOf(t)
		kind.CheckSpec(s, &v.FieldErrors)
		for _, f := range kind.SetFields(s) {
			used[f] = true
		}
	}
	for _, kind := range registeredRules() {
		for _, f := range kind.SetFields(s) {
			if !used[f] {
				v.Add(f, i18n.FieldNotApplicable, offeredList)
			}
		}
	}
}

// OSNameOK reports whether name has the shape of an OS name in a plan's catalog.
func OSNameOK(name string) bool { return osNamePattern.MatchString(name) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
