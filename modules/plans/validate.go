package plans

import (
	"net/http"
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
// an *i18n.Problem: 422 validation_failed listing every bad field, or — for a plan that offers
// only containers and asks for a pause suspend mode — 422 not_possible_for_container, permanent
// (R15).
func Validate(spec Spec, clusters Clusters) (Plan, error) {
	v := &fieldErrors{}
	v.tags(spec)
	v.domain(spec, clusters)
	if p := v.Problem(); p != nil {
		return Plan{}, p
	}
	if len(spec.GuestTypes) == 1 && spec.GuestTypes[0] == Container && spec.VMSuspendMode != "" && spec.VMSuspendMode != SuspendStop {
		p := i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeNotPossibleContainer).Perm(i18n.Permanent)
		p.Fields = []i18n.FieldError{{Field: "vm_suspend_mode", Code: i18n.FieldOneOf, Param: string(SuspendStop)}}
		return Plan{}, p
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

// byGuestType checks what depends on the offered guest types (offeredList names them): the OS
// catalogs, swap and the clone mode.
func (v *fieldErrors) byGuestType(s Spec, offeredList string) {
	offers := func(t GuestType) bool { return slices.Contains(s.GuestTypes, t) }
	// The OS catalog: required and well-formed for each offered type, absent for the others.
	if offers(Container) {
		v.containerCatalog(s.OS.Container)
	} else if len(s.OS.Container) > 0 {
		v.Add("os.container", i18n.FieldNotApplicable, offeredList)
	}
	if offers(VM) {
		v.vmCatalog(s.OS.VM)
	} else if len(s.OS.VM) > 0 {
		v.Add("os.vm", i18n.FieldNotApplicable, offeredList)
	}
	// A VM has no swap setting: a swap the customer would see but never get is refused (R5).
	if !offers(Container) && s.SwapMiB != nil && *s.SwapMiB != 0 && !v.Has("swap_mib") {
		v.Add("swap_mib", i18n.FieldNotApplicable, offeredList)
	}
	// Containers are created from a template archive, never cloned.
	if !offers(VM) && s.VMClone == CloneLinked {
		v.Add("vm_clone", i18n.FieldNotApplicable, offeredList)
	}
}

// containerCatalog checks the container OS catalog: not empty, each name well-formed and each
// value a template volume.
func (v *fieldErrors) containerCatalog(catalog map[string]string) {
	if len(catalog) == 0 {
		v.Add("os.container", i18n.FieldRequired, "")
	}
	for _, name := range sortedKeys(catalog) {
		field := "os.container[" + name + "]"
		if v.Has(field) {
			continue
		}
		if !osNamePattern.MatchString(name) || !isTemplateVolume(catalog[name]) {
			v.Add(field, i18n.FieldPattern, "")
		}
	}
}

// vmCatalog checks the VM OS catalog: not empty, each name well-formed and each entry a
// template vmid (100 to 999,999,999) or a VM name.
func (v *fieldErrors) vmCatalog(catalog map[string]VMTemplate) {
	if len(catalog) == 0 {
		v.Add("os.vm", i18n.FieldRequired, "")
	}
	for _, name := range sortedKeys(catalog) {
		field := "os.vm[" + name + "]"
		t := catalog[name]
		switch {
		case v.Has(field):
		case t.Name == "" && t.VMID < minVMID:
			v.Add(field, i18n.FieldTooSmall, strconv.Itoa(minVMID))
		case t.Name == "" && t.VMID > maxVMID:
			v.Add(field, i18n.FieldTooLarge, strconv.Itoa(maxVMID))
		case !osNamePattern.MatchString(name) || !t.valid():
			v.Add(field, i18n.FieldPattern, "")
		}
	}
}

// isTemplateVolume reports whether s is a container template volume id, STORAGE:vztmpl/NAME,
// as Proxmox's storage layer parses it (a filesystem path is root@pam only, so refused here).
func isTemplateVolume(s string) bool {
	vol, err := pveconf.ParseVolume(s)
	return err == nil && vol.Kind == pveconf.VolumeStorage && vol.VType == pveconf.VTypeVZTmpl
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
