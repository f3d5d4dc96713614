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

func (s *Sim) serveControl(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/_sim"), "/")
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	decode := func(v any) bool {
		if err := json.NewDecoder(r.Body).Decode(v); err != nil {
			ctlError(w, http.StatusBadRequest, fmt.Errorf("decode body: %w", err))
			return false
		}
		return true
	}
	ok := func(v any) { writeJSON(w, http.StatusOK, v) }
	switch {
	case r.Method == http.MethodPost && path == "/reset":
		s.Reset()
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodPost && path == "/guests":
		var g Guest
		if !decode(&g) {
			return
		}
		if err := s.SeedGuest(g); err != nil {
			ctlError(w, http.StatusConflict, err)
			return
		}
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "guests":
		id, err := strconv.Atoi(parts[1])
		if err != nil {
			ctlError(w, http.StatusBadRequest, err)
			return
		}
		g, found := s.Guest(id)
		if !found {
			ctlError(w, http.StatusNotFound, fmt.Errorf("guest %d does not exist", id))
			return
		}
		ok(g)
	case r.Method == http.MethodPost && path == "/config":
		var req struct {
			VMID  int    `json:"vmid"`
			Key   string `json:"key"`
			Value string `json:"value"`
		}
		if !decode(&req) {
			return
		}
		if err := s.SetConfig(req.VMID, req.Key, req.Value); err != nil {
			ctlError(w, http.StatusNotFound, err)
			return
		}
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodPost && path == "/volumes":
		var req struct {
			Storage   string `json:"storage"`
			Volname   string `json:"volname"`
			Size      int64  `json:"size"`
			Content   string `json:"content"`
			Node      string `json:"node"`
			Protected bool   `json:"protected"`
			Notes     string `json:"notes"`
		}
		if !decode(&req) {
			return
		}
		s.AddVolumeOn(req.Node, req.Storage, req.Volname, req.Size, req.Content)
		if req.Protected || req.Notes != "" {
			s.SetVolumeProtected(req.Storage, req.Volname, req.Protected, req.Notes)
		}
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodGet && path == "/volumes":
		ok(s.Volumes(r.URL.Query().Get("storage")))
	case r.Method == http.MethodPost && path == "/storages":
		var req struct {
			ID      string   `json:"id"`
			Type    string   `json:"type"`
			Content []string `json:"content"`
			Shared  bool     `json:"shared"`
		}
		if !decode(&req) {
			return
		}
		s.AddStorage(req.ID, req.Type, req.Content, req.Shared)
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodPost && path == "/pools":
		var req struct {
			ID string `json:"id"`
		}
		if !decode(&req) {
			return
		}
		s.AddPool(req.ID)
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodPost && path == "/faults":
		var req struct {
			Fault
			Delay durationJSON `json:"delay"`
		}
		if !decode(&req) {
			return
		}
		f := req.Fault
		f.Delay = req.Delay.Duration
		ok(map[string]any{"id": s.InjectFault(f)})
	case r.Method == http.MethodDelete && path == "/faults":
		s.ClearFaults()
		ok(map[string]any{"ok": true})
	case len(parts) == 3 && parts[0] == "nodes":
		node := parts[1]
		switch {
		case r.Method == http.MethodPost && parts[2] == "options":
			var req struct {
				NodeOptions
				Latency durationJSON `json:"latency"`
			}
			if !decode(&req) {
				return
			}
			o := req.NodeOptions
			o.Latency = req.Latency.Duration
			s.SetNodeOptions(node, o)
			ok(map[string]any{"ok": true})
		case r.Method == http.MethodPost && parts[2] == "online":
			var req struct {
				Up bool `json:"up"`
			}
			if !decode(&req) {
				return
			}
			s.SetNodeOnline(node, req.Up)
			ok(map[string]any{"ok": true})
		case r.Method == http.MethodGet && parts[2] == "maxinflight":
			ok(map[string]any{"max": s.MaxInFlight(node)})
		default:
			ctlError(w, http.StatusNotFound, fmt.Errorf("unknown control path %s %s", r.Method, r.URL.Path))
		}
	case r.Method == http.MethodPost && path == "/task-duration":
		var req struct {
			Type     string       `json:"type"`
			Duration durationJSON `json:"duration"`
		}
		if !decode(&req) {
			return
		}
		s.SetTaskDuration(req.Type, req.Duration.Duration)
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodPost && path == "/advance":
		var req struct {
			Duration durationJSON `json:"duration"`
		}
		if !decode(&req) {
			return
		}
		s.Advance(req.Duration.Duration)
		ok(map[string]any{"now": s.Now().Unix()})
	case r.Method == http.MethodGet && path == "/requests":
		ok(s.Requests())
	case r.Method == http.MethodDelete && path == "/requests":
		s.ResetLog()
		ok(map[string]any{"ok": true})
	case r.Method == http.MethodGet && path == "/violations":
		v := s.SchemaViolations()
		if v == nil {
			v = []Violation{}
		}
		ok(v)
	case r.Method == http.MethodGet && path == "/tasks":
		ok(s.Tasks())
	default:
		ctlError(w, http.StatusNotFound, fmt.Errorf("unknown control path %s %s", r.Method, r.URL.Path))
	}
}
