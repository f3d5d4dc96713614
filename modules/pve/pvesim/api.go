package pvesim

import (
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
	entry := Request{Method: method, Path: rel, Form: copyValues(form), Time: s.now(), Node: node}
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
	f, hang := s.matchFault(method, rel, template)
	if f != nil && s.faultBefore(w, r, f, hang, entry) {
		return
	}
	status, body := s.handleAPI(r, method, rel, template, sn, vars, form, f)
	if f != nil && f.After && s.faultAnswer(w, f, entry) {
		return
	}
	entry.Status = status
	s.record(entry)
	if status == http.StatusUnauthorized && s.opts.AuthFailDelay > 0 {
		wait(r, s.opts.AuthFailDelay)
	}
	writeJSON(w, status, body)
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
