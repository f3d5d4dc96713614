package pvesim

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// serveAPI serves one request under /api2/json: the method check, the node's worker
// limit and latency, the faults, then the request itself; each is logged.
func (s *Sim) serveAPI(w http.ResponseWriter, r *http.Request) {
	rel := strings.TrimPrefix(r.URL.Path, apiPrefix)
	if rel == "" {
		rel = "/"
	}
	method := r.Method
	if !s.knownMethod(w, method, rel) {
		return
	}
	form, ferr := formParams(r)
	if ferr != nil {
		form = url.Values{}
	}
	node := nodeOfPath(rel)
	entry := Request{Method: method, Path: rel, Form: redactForm(rel, copyValues(form)), Time: s.now(), Node: node}
	if isConsoleSocketPath(method, rel) {
		s.serveConsoleSocket(w, r, form, entry)
		return
	}
	if method == http.MethodPost && isLXCSuspendPath(rel) {
		s.logMu.Lock()
		s.lxcSuspend++
		s.logMu.Unlock()
	}
	release, admitted := s.admit(r, node)
	defer release()
	if !admitted {
		entry.Status = 0 // the client gave up while waiting for a worker
		s.record(entry)
		return
	}

	vars := map[string]string{}
	sn := s.schema.lookupSegments(pathSegments(r), vars)
	template := ""
	if sn != nil {
		template = sn.template
	}
	entry.Template = template
	f, hang := s.matchFault(method, rel, template)
	if f != nil && s.faultBefore(w, r, f, hang, entry) {
		return
	}
	c := &reqCtx{s: s, method: method, path: rel, template: template, vars: vars, r: r, fault: f}
	status, body := s.handleAPI(c, sn, form)
	if f != nil && f.After && s.faultAnswer(w, f, entry) {
		return
	}
	entry.Status = status
	entry.Task = startsTask(body)
	s.record(entry)
	if status == http.StatusUnauthorized && s.opts.AuthFailDelay > 0 {
		wait(r, s.opts.AuthFailDelay)
	}
	writeJSON(w, status, body)
}

// startsTask reports whether an answer's data is a task's UPID.
func startsTask(body any) bool {
	m, ok := body.(map[string]any)
	if !ok {
		return false
	}
	upid, ok := m["data"].(string)
	return ok && strings.HasPrefix(upid, "UPID:")
}

// knownMethod answers 501 for a method pve-http-server does not know (it knows only
// GET, POST, PUT and DELETE) and reports whether the method is known.
func (s *Sim) knownMethod(w http.ResponseWriter, method, rel string) bool {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
		return true
	}
	msg := fmt.Sprintf("method '%s' not available\n", method)
	s.record(Request{Method: method, Path: rel, Form: url.Values{}, Status: http.StatusNotImplemented, Time: s.now(), Node: nodeOfPath(rel)})
	s.addViolation(Violation{Method: method, Path: rel, Status: http.StatusNotImplemented, Message: msg})
	writeJSON(w, http.StatusNotImplemented, map[string]any{"data": nil, "message": msg})
	return false
}

// admit applies a node's worker limit and latency to a request for that node. It
// returns the release to call when the request is done, and false when the client gave
// up while waiting for a worker.
func (s *Sim) admit(r *http.Request, node string) (func(), bool) {
	if node == "" {
		return func() {}, true
	}
	s.mu.RLock()
	ns := s.nodes[node]
	var sem chan struct{}
	var lat time.Duration
	if ns != nil {
		sem, lat = ns.sem, ns.opts.Latency
	}
	s.mu.RUnlock()
	releases := []func(){}
	release := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	if sem != nil {
		select {
		case sem <- struct{}{}:
			releases = append(releases, func() { <-sem })
		case <-r.Context().Done():
			return release, false
		}
	}
	if ns != nil {
		ns.enter()
		releases = append(releases, ns.leave)
	}
	if lat > 0 {
		wait(r, lat)
	}
	return release, true
}

// wait sleeps for d or until the client gives up.
func wait(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// checkAuth verifies "Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET" (or a space
// after PVEAPIToken), splitting on the last "=". It returns the full token id.
func (s *Sim) checkAuth(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	var v string
	switch {
	case strings.HasPrefix(h, "PVEAPIToken="):
		v = strings.TrimPrefix(h, "PVEAPIToken=")
	case strings.HasPrefix(h, "PVEAPIToken "):
		v = strings.TrimPrefix(h, "PVEAPIToken ")
	default:
		return "", false
	}
	if uv, err := url.PathUnescape(v); err == nil {
		v = uv
	}
	i := strings.LastIndex(v, "=")
	if i < 0 {
		return "", false
	}
	id, secret := strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
	if id != s.opts.TokenID || secret != s.opts.TokenSecret {
		return "", false
	}
	return id, true
}

// apiAnswer is an API answer: its status and the JSON body.
type apiAnswer struct {
	status int
	body   any
}

func messageAnswer(status int, msg string) *apiAnswer {
	return &apiAnswer{status: status, body: map[string]any{"data": nil, "message": msg}}
}

// handleAPI runs one API request (c carries its method, path, template and path
// variables) and returns the status and body: authentication, the schema's method and
// parameters, the node, then the simulated handler.
func (s *Sim) handleAPI(c *reqCtx, sn *schemaNode, form url.Values) (int, any) {
	user, refused := s.authenticate(c)
	if refused != nil {
		return refused.status, refused.body
	}
	c.user = user
	s.settle()
	if a := s.checkSchema(c, sn, form); a != nil {
		return a.status, a.body
	}
	if a := s.checkNode(c); a != nil {
		return a.status, a.body
	}
	a := s.runHandler(c)
	return a.status, a.body
}

// checkSchema refuses a method the schema does not know (501) and parameters it does not
// allow (400), each recorded as a violation; otherwise it sets c.params.
func (s *Sim) checkSchema(c *reqCtx, sn *schemaNode, form url.Values) *apiAnswer {
	var sm *schemaMethod
	if sn != nil {
		sm = sn.methods[c.method]
	}
	if sm == nil {
		msg := fmt.Sprintf("Method '%s %s' not implemented\n", c.method, c.path)
		s.addViolation(Violation{Method: c.method, Path: c.path, Template: c.template, Status: http.StatusNotImplemented, Message: msg})
		return messageAnswer(http.StatusNotImplemented, msg)
	}
	params := copyValues(form)
	for k, v := range c.vars {
		params.Set(k, v)
	}
	if errs := sm.validate(params); errs != nil {
		s.addViolation(Violation{Method: c.method, Path: c.path, Template: c.template, Status: http.StatusBadRequest,
			Message: "Parameter verification failed.\n", Errors: errs})
		return &apiAnswer{status: http.StatusBadRequest,
			body: map[string]any{"data": nil, "message": "Parameter verification failed.\n", "errors": errs}}
	}
	c.params = params
	return nil
}

// checkNode sets c.node for a path below /nodes/{node}, and answers as pveproxy does
// for an unknown node (500) or one that is off-line (595).
func (s *Sim) checkNode(c *reqCtx) *apiAnswer {
	n, ok := c.vars["node"]
	if !ok || !strings.HasPrefix(c.template, "/nodes/{node}") {
		return nil
	}
	c.node = n
	s.mu.RLock()
	ns := s.nodes[n]
	online := ns != nil && ns.online
	s.mu.RUnlock()
	if ns == nil {
		return messageAnswer(http.StatusInternalServerError,
			fmt.Sprintf("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known\n", n, n))
	}
	if !online {
		return messageAnswer(595, "No route to host\n")
	}
	return nil
}

// runHandler calls the simulated handler and puts its result or error into Proxmox's
// envelope; a path the schema knows but the simulator does not answers 501.
func (s *Sim) runHandler(c *reqCtx) *apiAnswer {
	h := s.routes[c.method+" "+c.template]
	if h == nil {
		return messageAnswer(http.StatusNotImplemented,
			fmt.Sprintf("pvesim: '%s %s' exists in Proxmox but is not simulated\n", c.method, c.template))
	}
	data, err := h(c)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		return &apiAnswer{status: ae.status, body: errorBody(ae)}
	}
	if wt, ok := data.(withTotal); ok {
		return &apiAnswer{status: http.StatusOK, body: map[string]any{"data": wt.data, "total": wt.total}}
	}
	return &apiAnswer{status: http.StatusOK, body: map[string]any{"data": data}}
}
