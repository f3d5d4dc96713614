package qemu

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// Where a VM can be created (R52, docs/proxmox.md §16): a plan's catalog entry names a template
// by vmid or by name; every node holding a VM template it names clones its own (hosts keep one
// copy per node), and a template whose volumes are all on shared storage also serves every
// other node, through clone with target, when the clone can land there: a linked clone stays on
// the template's storage, a full clone needs the plan's storage to be shared (Proxmox refuses
// target beside a local storage).

var _ kinds.Cloner = (*Module)(nil)

// TemplateSources maps each node a VM of the plan with os can be created on to its template,
// from one read of /cluster/resources and, only when some node has no template of its own, the
// configs of the templates until one is found all on shared storage.
func (m *Module) TemplateSources(ctx context.Context, cl kinds.Cluster, p plans.Plan, os string) (map[string]kinds.TemplateSource, error) {
	ref, err := p.VMTemplate(os)
	if err != nil {
		return nil, err
	}
	rows, err := cl.Client.Cluster().Resources(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list resources of %s: %w", cl.Name, err)
	}
	return templateSources(ctx, cl.Client, p, ref, rows)
}

// catalogTemplates is what one /cluster/resources says of a catalog entry: the nodes, which
// storages are shared, and the VM templates the entry names, by vmid.
type catalogTemplates struct {
	nodes  []string
	shared map[string]bool
	tmpls  []kinds.TemplateSource
}

func readCatalog(ref plans.VMTemplate, rows []pve.ClusterResource) catalogTemplates {
	c := catalogTemplates{shared: map[string]bool{}}
	for _, r := range rows {
		switch {
		case r.Type == "node":
			c.nodes = append(c.nodes, r.Node)
		case r.Type == "storage" && bool(r.Shared):
			c.shared[r.Storage] = true
		case r.Type == "qemu" && bool(r.Template) && names(ref, r):
			c.tmpls = append(c.tmpls, kinds.TemplateSource{VMID: r.VMID.Int(), Node: r.Node})
		}
	}
	sort.Slice(c.tmpls, func(i, j int) bool { return c.tmpls[i].VMID < c.tmpls[j].VMID })
	return c
}

// names reports whether a template row is the one ref names.
func names(ref plans.VMTemplate, r pve.ClusterResource) bool {
	if ref.Name != "" {
		return r.Name == ref.Name
	}
	return r.VMID.Int() == ref.VMID
}

func templateSources(ctx context.Context, c *pve.Client, p plans.Plan, ref plans.VMTemplate,
	rows []pve.ClusterResource) (map[string]kinds.TemplateSource, error) {
	cat := readCatalog(ref, rows)
	out := map[string]kinds.TemplateSource{}
	for _, t := range cat.tmpls {
		if _, ok := out[t.Node]; !ok {
			out[t.Node] = t
		}
	}
	crossNode := p.VMClone == plans.CloneLinked || cat.shared[p.Storage]
	if len(out) == len(cat.nodes) || !crossNode {
		return out, nil
	}
	for _, t := range cat.tmpls {
		ok, err := onSharedStorage(ctx, c, t, cat.shared)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, n := range cat.nodes {
			if _, has := out[n]; !has {
				out[n] = t
			}
		}
		break
	}
	return out, nil
}

// onSharedStorage reads a template's config and reports whether every volume of it (disks,
// the cloud-init drive, EFI and TPM state, an ISO in a drive) is on shared storage: what
// Proxmox asks of a clone with target. An empty drive ("none", a physical "cdrom") holds none.
func onSharedStorage(ctx context.Context, c *pve.Client, t kinds.TemplateSource, shared map[string]bool) (bool, error) {
	cfg, err := c.Node(t.Node).QEMU(t.VMID).ConfigCurrent(ctx)
	if err != nil {
		return false, fmt.Errorf("read template %d config: %w", t.VMID, err)
	}
	for _, v := range cfg.Disks {
		vol, _, _ := strings.Cut(v, ",")
		if vol == "" || vol == "none" || vol == "cdrom" {
			continue
		}
		// A volume that does not parse as a storage volume (a path) is not on shared storage.
		pv, perr := pveconf.ParseVolume(vol)
		if perr != nil || pv.Kind != pveconf.VolumeStorage || !shared[pv.Storage] {
			return false, nil //nolint:nilerr // unparsable means "not shared", not a failure
		}
	}
	return true, nil
}

// sourceFor is the template a VM on g.Node is cloned from: the one placement chose, else the
// one that serves g.Node.
func (m *Module) sourceFor(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) (kinds.TemplateSource, error) {
	if spec.Template != nil {
		return *spec.Template, nil
	}
	t, node, err := m.replacementSource(ctx, g, spec.Plan, spec.OS)
	if err == nil && node != g.Node {
		err = fmt.Errorf("no template of %s serves node %s", spec.OS, g.Node)
	}
	return t, err
}

// replacementSource is the template a VM that replaces g (a reinstall's clone) is cloned from,
// and the node it then lives on: g's own node when a template serves it, else the node of a
// template of the catalog entry (the first by name), where Proxmox clones it.
func (m *Module) replacementSource(ctx context.Context, g kinds.Guest, p plans.Plan, os string) (kinds.TemplateSource, string, error) {
	srcs, err := m.TemplateSources(ctx, kinds.Cluster{Name: g.Cluster, Client: g.Client}, p, os)
	if err != nil {
		return kinds.TemplateSource{}, "", err
	}
	if t, ok := srcs[g.Node]; ok {
		return t, g.Node, nil
	}
	nodes := make([]string, 0, len(srcs))
	for n := range srcs {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		if srcs[n].Node == n {
			return srcs[n], n, nil
		}
	}
	ref, _ := p.VMTemplate(os)
	return kinds.TemplateSource{}, "", fmt.Errorf("template %s not found on cluster %s", ref, g.Cluster)
}
