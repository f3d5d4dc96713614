package pvesim

import "strings"

// route is a simulated handler, bound to its Sim by buildRoutes.
type route func(s *Sim, c *reqCtx) (any, error)

// apiRoutes maps "METHOD /schema/template" to the simulated handlers, by resource. Paths
// the schema knows but the simulator does not implement answer 501 with a "not
// simulated" message. Guest firewall routes (the same for containers and VMs) and the
// guest-agent sub paths are added by buildRoutes.
var apiRoutes = map[string]route{
	// cluster (cluster.go, nodes.go, firewall.go, ha.go)
	"GET /version":                       (*Sim).hVersion,
	"GET /cluster/nextid":                (*Sim).hNextID,
	"GET /cluster/resources":             (*Sim).hClusterResources,
	"GET /cluster/firewall/options":      (*Sim).hClusterFirewallOptionsGet,
	"PUT /cluster/firewall/options":      (*Sim).hClusterFirewallOptionsPut,
	"GET /cluster/ha/resources":          (*Sim).hHAResources,
	"POST /cluster/ha/resources":         (*Sim).hHAResourceCreate,
	"PUT /cluster/ha/resources/{sid}":    (*Sim).hHAResourceUpdate,
	"DELETE /cluster/ha/resources/{sid}": (*Sim).hHAResourceDelete,
	"GET /nodes":                         (*Sim).hNodes,
	"GET /nodes/{node}/status":           (*Sim).hNodeStatus,

	// tasks (tasks.go)
	"GET /nodes/{node}/tasks":               (*Sim).hTaskList,
	"GET /nodes/{node}/tasks/{upid}/status": (*Sim).hTaskStatus,
	"GET /nodes/{node}/tasks/{upid}/log":    (*Sim).hTaskLog,

	// containers (lxc.go, lxc_create.go, lxc_config.go)
	"GET /nodes/{node}/lxc":                         (*Sim).hLXCIndex,
	"POST /nodes/{node}/lxc":                        (*Sim).hLXCCreate,
	"DELETE /nodes/{node}/lxc/{vmid}":               (*Sim).hLXCDelete,
	"GET /nodes/{node}/lxc/{vmid}/config":           (*Sim).hLXCConfigGet,
	"PUT /nodes/{node}/lxc/{vmid}/config":           (*Sim).hLXCConfigPut,
	"GET /nodes/{node}/lxc/{vmid}/pending":          (*Sim).hLXCPending,
	"GET /nodes/{node}/lxc/{vmid}/status/current":   (*Sim).hLXCStatusCurrent,
	"POST /nodes/{node}/lxc/{vmid}/status/start":    (*Sim).hLXCStart,
	"POST /nodes/{node}/lxc/{vmid}/status/stop":     (*Sim).hLXCStop,
	"POST /nodes/{node}/lxc/{vmid}/status/shutdown": (*Sim).hLXCShutdown,
	"POST /nodes/{node}/lxc/{vmid}/status/reboot":   (*Sim).hLXCReboot,
	"POST /nodes/{node}/lxc/{vmid}/status/suspend":  (*Sim).hLXCSuspend,
	"POST /nodes/{node}/lxc/{vmid}/status/resume":   (*Sim).hLXCResume,
	"PUT /nodes/{node}/lxc/{vmid}/resize":           (*Sim).hLXCResize,
	"GET /nodes/{node}/lxc/{vmid}/interfaces":       (*Sim).hLXCInterfaces,
	"POST /nodes/{node}/lxc/{vmid}/migrate":         (*Sim).hLXCMigrate,

	// VMs (qemu.go, qemu_config.go, qemu_clone.go, qemu_agent.go)
	"DELETE /nodes/{node}/qemu/{vmid}":               (*Sim).hQemuDelete,
	"POST /nodes/{node}/qemu":                        (*Sim).hQemuCreate,
	"POST /nodes/{node}/qemu/{vmid}/clone":           (*Sim).hQemuClone,
	"GET /nodes/{node}/qemu/{vmid}/migrate":          (*Sim).hQemuMigratePrecondition,
	"POST /nodes/{node}/qemu/{vmid}/migrate":         (*Sim).hQemuMigrate,
	"GET /nodes/{node}/qemu/{vmid}/config":           (*Sim).hQemuConfigGet,
	"PUT /nodes/{node}/qemu/{vmid}/config":           (*Sim).hQemuConfigPut,
	"POST /nodes/{node}/qemu/{vmid}/config":          (*Sim).hQemuConfigPost,
	"GET /nodes/{node}/qemu/{vmid}/pending":          (*Sim).hQemuPending,
	"GET /nodes/{node}/qemu/{vmid}/cloudinit":        (*Sim).hQemuCloudInitGet,
	"PUT /nodes/{node}/qemu/{vmid}/cloudinit":        (*Sim).hQemuCloudInitPut,
	"PUT /nodes/{node}/qemu/{vmid}/resize":           (*Sim).hQemuResize,
	"GET /nodes/{node}/qemu/{vmid}/status/current":   (*Sim).hQemuStatusCurrent,
	"POST /nodes/{node}/qemu/{vmid}/status/start":    (*Sim).hQemuStart,
	"POST /nodes/{node}/qemu/{vmid}/status/stop":     (*Sim).hQemuStop,
	"POST /nodes/{node}/qemu/{vmid}/status/shutdown": (*Sim).hQemuShutdown,
	"POST /nodes/{node}/qemu/{vmid}/status/reset":    (*Sim).hQemuReset,
	"POST /nodes/{node}/qemu/{vmid}/status/reboot":   (*Sim).hQemuReboot,
	"POST /nodes/{node}/qemu/{vmid}/status/suspend":  (*Sim).hQemuSuspend,
	"POST /nodes/{node}/qemu/{vmid}/status/resume":   (*Sim).hQemuResume,

	// storage (storage.go)
	"GET /storage":                                            (*Sim).hStorageConfigList,
	"GET /storage/{storage}":                                  (*Sim).hStorageConfigGet,
	"GET /nodes/{node}/storage":                               (*Sim).hStorageList,
	"GET /nodes/{node}/storage/{storage}/content":             (*Sim).hStorageContent,
	"DELETE /nodes/{node}/storage/{storage}/content/{volume}": (*Sim).hStorageContentDelete,
	"GET /nodes/{node}/storage/{storage}/content/{volume}":    (*Sim).hStorageVolume,

	// pools (pools.go)
	"GET /pools":             (*Sim).hPoolsGet,
	"DELETE /pools/{poolid}": (*Sim).hPoolDelete,

	// access and consoles (access.go, console.go; the vncwebsocket upgrade is console_socket.go)
	"POST /access/ticket":                     (*Sim).hAccessTicket,
	"POST /nodes/{node}/lxc/{vmid}/termproxy": (*Sim).hLXCTermproxy,
	"POST /nodes/{node}/qemu/{vmid}/vncproxy": (*Sim).hQemuVncproxy,

	// backups (backup.go)
	"POST /nodes/{node}/vzdump":              (*Sim).hVzdump,
	"GET /nodes/{node}/vzdump/extractconfig": (*Sim).hVzdumpExtractConfig,
}

// guestFirewallRoutes are the firewall routes below /nodes/{node}/{lxc,qemu}/{vmid}/firewall
// (firewall.go).
var guestFirewallRoutes = map[string]route{
	"GET /options":                (*Sim).hFWOptionsGet,
	"PUT /options":                (*Sim).hFWOptionsPut,
	"GET /ipset":                  (*Sim).hFWIPSetList,
	"POST /ipset":                 (*Sim).hFWIPSetCreate,
	"GET /ipset/{name}":           (*Sim).hFWIPSetGet,
	"POST /ipset/{name}":          (*Sim).hFWIPSetAdd,
	"DELETE /ipset/{name}":        (*Sim).hFWIPSetDelete,
	"DELETE /ipset/{name}/{cidr}": (*Sim).hFWIPSetEntryDelete,
}

// buildRoutes binds the route tables to s: apiRoutes, the guest firewall routes for
// both guest types, and every guest-agent sub path the schema knows.
func (s *Sim) buildRoutes() map[string]handlerFunc {
	r := map[string]handlerFunc{}
	bind := func(key string, h route) { r[key] = func(c *reqCtx) (any, error) { return h(s, c) } }
	for k, h := range apiRoutes {
		bind(k, h)
	}
	for _, typ := range []string{"lxc", "qemu"} {
		for k, h := range guestFirewallRoutes {
			method, sub, _ := strings.Cut(k, " ")
			bind(method+" /nodes/{node}/"+typ+"/{vmid}/firewall"+sub, h)
		}
		for k, h := range snapshotRoutes(typ) {
			method, sub, _ := strings.Cut(k, " ")
			bind(method+" /nodes/{node}/"+typ+"/{vmid}/snapshot"+sub, h)
		}
	}
	if n := s.schema.lookup("/nodes/x/qemu/100/agent", map[string]string{}); n != nil {
		for seg, child := range n.fixed {
			for m := range child.methods {
				bind(m+" /nodes/{node}/qemu/{vmid}/agent/"+seg, (*Sim).hQemuAgent)
			}
		}
	}
	return r
}
