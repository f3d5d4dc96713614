// Package pvesim is a simulator of the Proxmox VE HTTP API (PVE 8/9) for tests and demos.
//
// It serves /api2/json/ like pveproxy: every request is matched against Proxmox's own
// API schema (schema/pve-apidoc.json.gz, embedded) — unknown paths and methods answer 501,
// unknown, missing or malformed parameters answer 400 with Proxmox's error texts — and the
// refusals are kept in SchemaViolations so a test suite can fail when its client sends
// something real Proxmox would refuse.
//
// Behind the schema is a small cluster model: several nodes sharing one VMID space,
// storages of the usual types (dir, lvmthin, zfspool, ...), containers and VMs with
// configs, pending changes, locks and protection, asynchronous tasks with UPIDs and logs,
// ownership-aware destroy, template clones, cloud-init, guest firewall options and
// ipsets, and HA resources. Run-time figures (memory, swap, CPU, network) move over time
// but are a pure function of the seed, the vmid and the simulator clock.
//
// The simulator keeps its own implementation of Proxmox's volume naming, size formatting
// and ownership rules; it does not import pvebill's client parsers, so a parsing bug on
// one side shows up as a test failure instead of being mirrored.
//
// Tests drive it through Go methods (SeedGuest, SetConfig, InjectFault, ...) or, when it
// runs as a separate process, through the JSON control API under /_sim/ (see control.go).
package pvesim
