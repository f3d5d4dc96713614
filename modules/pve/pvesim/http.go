package pvesim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const apiPrefix = "/api2/json"

// apiError is an error answer in Proxmox's envelope.
type apiError struct {
	status int
	msg    string
	errors map[string]string
}

func (e *apiError) Error() string { return e.msg }

// fail500 is a plain handler error: Proxmox answers any die() with HTTP 500.
func fail500(format string, a ...any) error {
	return &apiError{status: http.StatusInternalServerError, msg: fmt.Sprintf(format, a...)}
}

// pveError is a failure in Proxmox's own wording, capitals and punctuation kept, such
// as a task's exit status.
type pveError string

func (e pveError) Error() string { return string(e) }

func pveErrorf(format string, a ...any) error { return pveError(fmt.Sprintf(format, a...)) }

// paramErr is raise_param_exc: 400 "Parameter verification failed." with errors.
func paramErr(errs map[string]string) error {
	return &apiError{status: http.StatusBadRequest, msg: "Parameter verification failed.", errors: errs}
}

// permErr is raise_perm_exc: 403 "Permission check failed (...)".
func permErr(what string) error { return permDenied(what) }

// permDenied is Proxmox's 403 for a missing privilege.
func permDenied(what string) *apiError {
	return &apiError{status: http.StatusForbidden, msg: fmt.Sprintf("Permission check failed (%s)", what)}
}

// withTotal is a success answer that carries a "total" beside "data".
type withTotal struct {
	data  any
	total int
}

type handlerFunc func(c *reqCtx) (any, error)

// reqCtx carries one API request through the handlers.
type reqCtx struct {
	s        *Sim
	method   string
	path     string
	template string
	params   url.Values // form/query parameters merged with the path variables
	vars     map[string]string
	node     string
	user     string // full token id
	fault    *Fault // matched fault that affects the task of this call
	r        *http.Request
}

func (c *reqCtx) str(k string) string { return c.params.Get(k) }

func (c *reqCtx) has(k string) bool { _, ok := c.params[k]; return ok }

func (c *reqCtx) boolean(k string) bool { return c.params.Get(k) == "1" }

func (c *reqCtx) integer(k string) int {
	var n int
	_, _ = fmt.Sscan(c.params.Get(k), &n) // like Perl, a malformed number reads as 0
	return n
}

// ServeHTTP serves the Proxmox API under /api2/json/ and the control API under /_sim/.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") || r.URL.Path == "/_sim" {
		s.serveControl(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, apiPrefix+"/") && r.URL.Path != apiPrefix {
		writeJSON(w, http.StatusNotImplemented, map[string]any{"data": nil, "message": fmt.Sprintf("no such file '%s'\n", r.URL.Path)})
		return
	}
	s.serveAPI(w, r)
}

// formParams reads the query and, for POST/PUT, the urlencoded body; query values win,
// like pve-http-server's extract_params.
func formParams(r *http.Request) (url.Values, error) {
	form := url.Values{}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64*1024+1))
		if err != nil {
			return nil, err
		}
		if len(body) > 0 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			if err := jsonParams(body, form); err != nil {
				return nil, err
			}
		} else if len(body) > 0 {
			bv, err := url.ParseQuery(string(body))
			if err != nil {
				return nil, err
			}
			for k, v := range bv {
				form[k] = v
			}
		}
	}
	for k, v := range r.URL.Query() {
		form[k] = v
	}
	delete(form, "_dc")
	return form, nil
}

// jsonParams reads a JSON object body (pve-http-server accepts those too) into form values.
func jsonParams(body []byte, form url.Values) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return err
	}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			form.Set(k, x)
		case bool:
			form.Set(k, map[bool]string{true: "1", false: "0"}[x])
		case float64:
			form.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
		case []any:
			for _, e := range x {
				form.Add(k, fmt.Sprint(e))
			}
		case nil:
		default:
			b, _ := json.Marshal(x)
			form.Set(k, string(b))
		}
	}
	return nil
}

// pathSegments splits the escaped request path below /api2/json and unescapes each
// segment, so a volume id sent as "backup%2Fvzdump-..." stays one path variable.
func pathSegments(r *http.Request) []string {
	raw := strings.TrimPrefix(r.URL.EscapedPath(), apiPrefix)
	var out []string
	for _, seg := range strings.Split(raw, "/") {
		if seg == "" {
			continue
		}
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		out = append(out, seg)
	}
	return out
}

func isLXCSuspendPath(rel string) bool {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	return len(parts) == 6 && parts[0] == "nodes" && parts[2] == "lxc" && parts[4] == "status" && parts[5] == "suspend"
}

func copyValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vals := range v {
		out[k] = append([]string(nil), vals...)
	}
	return out
}

func nodeOfPath(rel string) string {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	if len(parts) >= 2 && parts[0] == "nodes" {
		return parts[1]
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"data":null,"message":"pvesim: encoding failed\n"}`)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "max-age=0")
	w.Header().Set("Server", "pve-api-daemon/3.0")
	w.WriteHeader(status)
	_, _ = w.Write(b) // the client may have gone; nothing to tell it
}

func errorBody(e *apiError) map[string]any {
	msg := e.msg
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	body := map[string]any{"data": nil, "message": msg}
	if len(e.errors) > 0 {
		body["errors"] = e.errors
	}
	return body
}
