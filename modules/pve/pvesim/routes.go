package pvesim

// buildRoutes maps "METHOD /schema/template" to the simulated handlers. Paths the schema
// knows but the simulator does not implement answer 501 with a "not simulated" message.
func (s *Sim) buildRoutes() map[string]handlerFunc {
	r := map[string]handlerFunc{
		"GET /version":                       s.hVersion,
		"GET /cluster/nextid":                s.hNextID,
		"GET /cluster/resources":             s.hClusterResources,
		"GET /cluster/firewall/options":      s.hClusterFirewallOptionsGet,
		"PUT /cluster/firewall/options":      s.hClusterFirewallOptionsPut,
		"GET /cluster/ha/resources":          s.hHAResources,
		"POST /cluster/ha/resources":         s.hHAResourceCreate,
		"PUT /cluster/ha/resources/{sid}":    s.hHAResourceUpdate,
		"DELETE /cluster/ha/resources/{sid}": s.hHAResourceDelete,
		"GET /nodes":                         s.hNodes,
		"GET /nodes/{node}/status":           s.hNodeStatus,

		"GET /nodes/{node}/tasks":               s.hTaskList,
		"GET /nodes/{node}/tasks/{upid}/status": s.hTaskStatus,
		"GET /nodes/{node}/tasks/{upid}/log":    s.hTaskLog,

		"GET /nodes/{node}/lxc":                         s.hLXCIndex,
		"POST /nodes/{node}/lxc":                        s.hLXCCreate,
		"DELETE /nodes/{node}/lxc/{vmid}":               s.hLXCDelete,
		"GET /nodes/{node}/lxc/{vmid}/config":           s.hLXCConfigGet,
		"PUT /nodes/{node}/lxc/{vmid}/config":           s.hLXCConfigPut,
		"GET /nodes/{node}/lxc/{vmid}/pending":          s.hLXCPending,
		"GET /nodes/{node}/lxc/{vmid}/status/current":   s.hLXCStatusCurrent,
		"POST /nodes/{node}/lxc/{vmid}/status/start":    s.hLXCStart,
		"POST /nodes/{node}/lxc/{vmid}/status/stop":     s.hLXCStop,
		"POST /nodes/{node}/lxc/{vmid}/status/shutdown": s.hLXCShutdown,
		"POST /nodes/{node}/lxc/{vmid}/status/reboot":   s.hLXCReboot,
		"POST /nodes/{node}/lxc/{vmid}/status/suspend":  s.hLXCSuspend,
		"POST /nodes/{node}/lxc/{vmid}/status/resume":   s.hLXCResume,
		"PUT /nodes/{node}/lxc/{vmid}/resize":           s.hLXCResize,
		"GET /nodes/{node}/lxc/{vmid}/interfaces":       s.hLXCInterfaces,
	}
	for k, h := range s.extraRoutes() {
		r[k] = h
	}
	return r
}

func (s *Sim) extraRoutes() map[string]handlerFunc {
	r := map[string]handlerFunc{}
	r["POST /nodes/{node}/vzdump"] = s.hVzdump
	for _, m := range []map[string]handlerFunc{qemuRoutes(s), storageRoutes(s), firewallRoutes(s), poolRoutes(s)} {
		for k, h := range m {
			r[k] = h
		}
	}
	return r
}
