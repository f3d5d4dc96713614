package qemu

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"pvebill/modules/kinds"
	"pvebill/modules/pve"
	"pvebill/modules/reinstall"
)

// A VM's restore (R43) is qmrestore's API: the create call with archive=<backup>, force=1 over
// the stopped VM, the plan's storage, and the plan's cores and memory and the stamp sent
// explicitly (any option passed overrides the archive's; drives cannot be passed with an
// archive, docs/proxmox.md §9.3). The archive's drives come back at their archived sizes; the
// boot disk is then grown to the plan's size, and the plan's net0, cloud-init network and
// firewall with its anti-spoofing filter are applied again as after a clone (R9).

// ReadForRestore reads the VM for a restore's preview: its drives and unused volumes
// labelled, a drive coming back when the archive's config has its key (read from the archive
// with extractconfig, docs/proxmox.md §9.5) and removed otherwise, as every unused volume is.
// Only GET requests are sent.
func (m *Module) ReadForRestore(ctx context.Context, g kinds.Guest, archive reinstall.ArchiveOf) (reinstall.Read, error) {
	return readLabelled(ctx, g, func(pve.QEMUConfig) (map[string]bool, error) {
		volid, err := archive(ctx)
		if err != nil {
			return nil, err
		}
		ac, err := g.Client.Node(g.Node).ExtractConfig(ctx, volid)
		if err != nil {
			return nil, fmt.Errorf("read the config of backup %s: %w", volid, err)
		}
		back := map[string]bool{}
		for k := range ac.Disks {
			back[k] = true
		}
		return back, nil
	})
}

// RestoreOver restores the archive over the stopped VM with qmrestore's API and waits for the
// task.
func (m *Module) RestoreOver(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, archive string) (kinds.Guest, error) {
	p := spec.Plan
	cores, mem := p.Cores, p.MemoryMiB
	req := pve.QEMURestoreRequest{Archive: archive, Force: true, Storage: p.Storage, Cores: &cores, Memory: &mem,
		Description: kinds.StampDescription(g), Tags: kinds.StampTag}
	if _, err := vm(g).Restore(ctx, req); err != nil {
		return g, fmt.Errorf("restore VM %d: %w", g.VMID, err)
	}
	return g, nil
}

// ConfigureRestored applies the plan to the restored VM as to a clone (Configure: cores,
// memory, net0, cloud-init network, onboot, the boot disk grown to the plan's size, the
// ipfilter set and the firewall, R9) and reads back the plan's memory.
func (m *Module) ConfigureRestored(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec) error {
	if err := m.Configure(ctx, g, spec, nil); err != nil {
		return err
	}
	cfg, err := vm(g).Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	// memory reads "2048", or "current=2048" on PVE 8.1 and later.
	mem := strings.TrimPrefix(strings.SplitN(string(cfg.Memory), ",", 2)[0], "current=")
	if mem != strconv.Itoa(spec.Plan.MemoryMiB) {
		return fmt.Errorf("restored VM %d memory does not read back as the plan's", g.VMID)
	}
	return nil
}

var (
	_ kinds.Restorer          = (*Module)(nil)
	_ reinstall.RestoreReader = (*Module)(nil)
)
