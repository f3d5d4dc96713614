// Package pvesim is a simulator of the Proxmox VE HTTP API (PVE 8/9) for tests and demos.
//
// # Schema
//
// It serves /api2/json/ like pveproxy. Every request is matched against Proxmox's own API
// schema (schema/pve-apidoc.json.gz, embedded, compiled once per process into a path trie):
// unknown paths and methods answer 501 "Method 'GET /x' not implemented", unknown, missing
// or malformed parameters answer 400 "Parameter verification failed." with per-parameter
// errors worded like PVE::JSONSchema (type checks where booleans are only 0/1, enums,
// ranges, lengths, patterns, property strings such as net0 or rootfs, indexed keys such as
// mp0..mp255, and the cheap named formats: pve-vmid, pve-node, dns-name, urlencoded, ...).
// Each refusal is kept in SchemaViolations, so a test suite can fail whenever its client
// sends something real Proxmox would refuse.
//
// # Cluster model
//
// Behind the schema is a small cluster: several nodes sharing one VMID space; storages of
// the usual types (dir, lvmthin, zfspool, ...) whose volumes are named, sized and owned as
// the pve-storage plugins do; containers and VMs with configs, pending changes, locks and
// protection; asynchronous tasks with UPIDs, logs and exit statuses; ownership-aware
// destroy; template clones; cloud-init; vzdump and restore; guest firewall options and
// ipsets; HA resources. Where Proxmox checks a precondition inside its worker (a lock on
// start or stop, a missing template, a QEMU resize that would shrink), the simulator fails
// the task, not the request; the other checks answer 500 at once, with Proxmox's wording.
//
// Run-time figures (memory, swap, CPU, network) move over time but are a pure function of
// the seed, the vmid and the simulator clock (10-second sample buckets). Options.Now and
// Advance make the clock deterministic; tasks end when their duration (Options.TaskDuration,
// SetTaskDuration per type; 0 = at the next request) has passed on that clock.
//
// The simulator keeps its own implementation of Proxmox's volume naming, size formatting
// and ownership rules; it does not import pvebill's client parsers, so a parsing bug on
// one side shows up as a test failure instead of being mirrored.
//
// # Layout
//
// This package holds only the imitation of Proxmox: one file per resource with its
// state and handlers (nodes, guests, lxc*, qemu*, storage and volumes, tasks, firewall,
// ha, pools, backup, faults, requestlog), the route table (routes.go), the request path
// (http.go, api.go), the schema checks (schema.go) and the control API (control.go); it
// must import no pvebill package but its own subpackages (no client parser, such as
// modules/pve or pveconf) and hold no pvebill domain logic, which a test enforces. A new
// simulated resource (consoles, snapshots, ...) is a new file with its state struct,
// embedded in Sim, and its rows in routes.go.
//
// # Simplifications
//
// Volumes of node-local storages carry the node they live on; volume names are unique per
// storage id across the cluster. Permissions are those of an API token that is not
// root@pam: bind and device mounts, bare-number rootfs, device passthrough and most
// feature flags are refused as Proxmox refuses them for such a token; everything else is
// allowed. The LXC suspend (CRIU checkpoint) task always fails and leaves the container
// running.
//
// # Driving it
//
// Tests drive it through Go methods (SeedGuest, SetConfig, AddVolume, InjectFault,
// SetNodeOptions, Advance, ...) and assert on Requests, Guest, Volumes and TaskLog. When
// it runs as a separate process, the same hooks are a JSON control API under /_sim/ (see
// control.go); it needs no token.
package pvesim
