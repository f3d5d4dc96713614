package pvesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The control API under /_sim/ exposes the test hooks as JSON so a simulator running as a
// separate process can be driven too. It needs no token.
//
//	POST   /_sim/reset                       reset to an empty cluster
//	POST   /_sim/guests          Guest       seed a guest
//	GET    /_sim/guests/{vmid}               GuestSnapshot
//	POST   /_sim/guests/{vmid}/agent {"running":bool}  start or stop a VM's guest agent
//	POST   /_sim/config          {vmid,key,value}   change a config behind pvebill's back
//	POST   /_sim/volumes         {storage,volname,size,content,node}
//	GET    /_sim/volumes?storage=ID          volume names
//	POST   /_sim/storages        {id,type,content,shared}
//	POST   /_sim/pools           {id}
//	POST   /_sim/faults          Fault       -> {"id":n}
//	DELETE /_sim/faults                      clear all faults
//	POST   /_sim/nodes/{node}/options NodeOptions
//	POST   /_sim/nodes/{node}/online  {"up":bool}
//	GET    /_sim/nodes/{node}/maxinflight    {"max":n}
//	POST   /_sim/task-duration   {"type":"vzcreate","duration":"2s"}
//	POST   /_sim/advance         {"duration":"10s"}
//	GET    /_sim/requests                    the request log
//	DELETE /_sim/requests                    empty the log and the violations
//	GET    /_sim/violations                  schema violations
//	GET    /_sim/tasks                       UPIDs
//	GET    /_sim/vzdumps                     the vzdump tasks: node, vmids, start, end, exit
//	GET    /_sim/consoles                    {"open": n} connected console sessions
//	DELETE /_sim/consoles                    end every console session {"closed": n}
//
// Every other path or method answers 404 {"error":"unknown control path ..."}.

// buildControl maps the control endpoints onto a ServeMux, one small handler each.
func (s *Sim) buildControl() *http.ServeMux {
	mux := http.NewServeMux()
	for pattern, h := range map[string]http.HandlerFunc{
		"POST /_sim/reset":                   s.ctlReset,
		"POST /_sim/guests":                  s.ctlSeedGuest,
		"GET /_sim/guests/{vmid}":            s.ctlGuest,
		"POST /_sim/guests/{vmid}/agent":     s.ctlAgent,
		"POST /_sim/config":                  s.ctlSetConfig,
		"POST /_sim/volumes":                 s.ctlAddVolume,
		"GET /_sim/volumes":                  s.ctlVolumes,
		"POST /_sim/storages":                s.ctlAddStorage,
		"POST /_sim/pools":                   s.ctlAddPool,
		"POST /_sim/faults":                  s.ctlInjectFault,
		"DELETE /_sim/faults":                s.ctlClearFaults,
		"POST /_sim/nodes/{node}/options":    s.ctlNodeOptions,
		"POST /_sim/nodes/{node}/online":     s.ctlNodeOnline,
		"GET /_sim/nodes/{node}/maxinflight": s.ctlMaxInFlight,
		"POST /_sim/task-duration":           s.ctlTaskDuration,
		"POST /_sim/advance":                 s.ctlAdvance,
		"GET /_sim/requests":                 s.ctlRequests,
		"DELETE /_sim/requests":              s.ctlResetLog,
		"GET /_sim/violations":               s.ctlViolations,
		"GET /_sim/tasks":                    s.ctlTasks,
		"GET /_sim/vzdumps":                  s.ctlVzdumps,
		"GET /_sim/consoles":                 s.ctlConsoles,
		"DELETE /_sim/consoles":              s.ctlCloseConsoles,
	} {
		mux.HandleFunc(pattern, h)
	}
	mux.HandleFunc("/_sim/", ctlUnknown)
	mux.HandleFunc("/_sim", ctlUnknown)
	return mux
}

// serveControl answers a control request; a trailing slash is ignored.
func (s *Sim) serveControl(w http.ResponseWriter, r *http.Request) {
	if p := strings.TrimSuffix(r.URL.Path, "/"); p != r.URL.Path && p != "/_sim" {
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path, u.RawPath = p, ""
		r2.URL = &u
		r = r2
	}
	if r.Method == http.MethodHead {
		// a GET pattern would serve HEAD too; the control API knows no HEAD
		ctlUnknown(w, r)
		return
	}
	s.control.ServeHTTP(w, r)
}

type durationJSON struct{ time.Duration }

func (d *durationJSON) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		d.Duration = v
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration must be a string like \"2s\" or nanoseconds")
	}
	d.Duration = time.Duration(n)
	return nil
}

func ctlError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]any{"error": err.Error()})
}

func ctlUnknown(w http.ResponseWriter, r *http.Request) {
	ctlError(w, http.StatusNotFound, fmt.Errorf("unknown control path %s %s", r.Method, r.URL.Path))
}

// ctlDecode reads the JSON body into v, or answers 400 and returns false.
func ctlDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("decode body: %w", err))
		return false
	}
	return true
}

func ctlOK(w http.ResponseWriter, v any) { writeJSON(w, http.StatusOK, v) }

var ctlDone = map[string]any{"ok": true}

func (s *Sim) ctlReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlSeedGuest(w http.ResponseWriter, r *http.Request) {
	var g Guest
	if !ctlDecode(w, r, &g) {
		return
	}
	if err := s.SeedGuest(g); err != nil {
		ctlError(w, http.StatusConflict, err)
		return
	}
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlGuest(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("vmid"))
	if err != nil {
		ctlError(w, http.StatusBadRequest, err)
		return
	}
	g, found := s.Guest(id)
	if !found {
		ctlError(w, http.StatusNotFound, fmt.Errorf("guest %d does not exist", id))
		return
	}
	ctlOK(w, g)
}

func (s *Sim) ctlSetConfig(w http.ResponseWriter, r *http.Request) {
	var req struct {
		VMID  int    `json:"vmid"`
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	if err := s.SetConfig(req.VMID, req.Key, req.Value); err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlAddVolume(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Storage   string `json:"storage"`
		Volname   string `json:"volname"`
		Size      int64  `json:"size"`
		Content   string `json:"content"`
		Node      string `json:"node"`
		Protected bool   `json:"protected"`
		Notes     string `json:"notes"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.AddVolumeOn(req.Node, req.Storage, req.Volname, req.Size, req.Content)
	if req.Protected || req.Notes != "" {
		s.SetVolumeProtected(req.Storage, req.Volname, req.Protected, req.Notes)
	}
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlVolumes(w http.ResponseWriter, r *http.Request) {
	ctlOK(w, s.Volumes(r.URL.Query().Get("storage")))
}

func (s *Sim) ctlAddStorage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID      string   `json:"id"`
		Type    string   `json:"type"`
		Content []string `json:"content"`
		Shared  bool     `json:"shared"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.AddStorage(req.ID, req.Type, req.Content, req.Shared)
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlAddPool(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID string `json:"id"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.AddPool(req.ID)
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlInjectFault(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fault
		Delay durationJSON `json:"delay"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	f := req.Fault
	f.Delay = req.Delay.Duration
	ctlOK(w, map[string]any{"id": s.InjectFault(f)})
}

func (s *Sim) ctlClearFaults(w http.ResponseWriter, _ *http.Request) {
	s.ClearFaults()
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlNodeOptions(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NodeOptions
		Latency durationJSON `json:"latency"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	o := req.NodeOptions
	o.Latency = req.Latency.Duration
	s.SetNodeOptions(r.PathValue("node"), o)
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlAgent(w http.ResponseWriter, r *http.Request) {
	vmid, err := strconv.Atoi(r.PathValue("vmid"))
	if err != nil {
		ctlError(w, http.StatusBadRequest, fmt.Errorf("vmid: %w", err))
		return
	}
	var req struct {
		Running bool `json:"running"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	if err := s.SetAgentRunning(vmid, req.Running); err != nil {
		ctlError(w, http.StatusNotFound, err)
		return
	}
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlNodeOnline(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Up bool `json:"up"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.SetNodeOnline(r.PathValue("node"), req.Up)
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlMaxInFlight(w http.ResponseWriter, r *http.Request) {
	ctlOK(w, map[string]any{"max": s.MaxInFlight(r.PathValue("node"))})
}

func (s *Sim) ctlTaskDuration(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Type     string       `json:"type"`
		Duration durationJSON `json:"duration"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.SetTaskDuration(req.Type, req.Duration.Duration)
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlAdvance(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Duration durationJSON `json:"duration"`
	}
	if !ctlDecode(w, r, &req) {
		return
	}
	s.Advance(req.Duration.Duration)
	ctlOK(w, map[string]any{"now": s.Now().Unix()})
}

func (s *Sim) ctlRequests(w http.ResponseWriter, _ *http.Request) { ctlOK(w, s.Requests()) }

func (s *Sim) ctlResetLog(w http.ResponseWriter, _ *http.Request) {
	s.ResetLog()
	ctlOK(w, ctlDone)
}

func (s *Sim) ctlViolations(w http.ResponseWriter, _ *http.Request) {
	v := s.SchemaViolations()
	if v == nil {
		v = []Violation{}
	}
	ctlOK(w, v)
}

func (s *Sim) ctlTasks(w http.ResponseWriter, _ *http.Request) { ctlOK(w, s.Tasks()) }

func (s *Sim) ctlVzdumps(w http.ResponseWriter, _ *http.Request) {
	v := s.Vzdumps()
	if v == nil {
		v = []VzdumpRun{}
	}
	ctlOK(w, v)
}

func (s *Sim) ctlConsoles(w http.ResponseWriter, _ *http.Request) {
	ctlOK(w, map[string]int{"open": s.OpenConsoles()})
}

func (s *Sim) ctlCloseConsoles(w http.ResponseWriter, _ *http.Request) {
	ctlOK(w, map[string]int{"closed": s.CloseConsoles()})
}
