package pve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The route table: every call this client makes, as a method and a path pattern of fixed
// segments and typed placeholders. The client checks each request against it before sending
// (a call missing from the table fails in every test that makes it), and the agent enforces
// the same table on every stream it forwards (design.md, "The agent"): what pvebill does not
// call, a compromised pvebill cannot call through an agent either.

// Route is one allowed call.
type Route struct {
	Method  string
	Pattern string
	// Direct routes are made only by a client that talks to Proxmox itself (the console user's
	// login): an agent holds the credentials and never forwards them.
	Direct bool
	// Upgrade routes are WebSocket upgrades (the console stream).
	Upgrade bool
}

// guestRoutes are the calls on one guest, under /nodes/{node}/{kind}/{vmid}; kind "" is both.
var guestRoutes = []struct{ method, kind, suffix string }{
	{http.MethodGet, "", "/config"},
	{http.MethodPut, "", "/config"},
	{http.MethodPost, "qemu", "/config"},
	{http.MethodGet, "lxc", "/pending"},
	{http.MethodGet, "", "/status/current"},
	{http.MethodPost, "", "/status/start"},
	{http.MethodPost, "", "/status/stop"},
	{http.MethodPost, "", "/status/shutdown"},
	{http.MethodPost, "", "/status/reboot"},
	{http.MethodPost, "qemu", "/status/suspend"},
	{http.MethodPost, "qemu", "/status/resume"},
	{http.MethodDelete, "", ""},
	{http.MethodPut, "", "/resize"},
	{http.MethodGet, "lxc", "/interfaces"},
	{http.MethodPost, "qemu", "/clone"},
	{http.MethodGet, "qemu", "/migrate"},
	{http.MethodPost, "", "/migrate"},
	{http.MethodPost, "qemu", "/agent/ping"},
	{http.MethodPost, "qemu", "/agent/set-user-password"},
	{http.MethodGet, "", "/snapshot"},
	{http.MethodPost, "", "/snapshot"},
	{http.MethodDelete, "", "/snapshot/{snapname}"},
	{http.MethodPost, "", "/snapshot/{snapname}/rollback"},
	{http.MethodGet, "", "/firewall/options"},
	{http.MethodPut, "", "/firewall/options"},
	{http.MethodGet, "", "/firewall/ipset"},
	{http.MethodPost, "", "/firewall/ipset"},
	{http.MethodGet, "", "/firewall/ipset/{ipset}"},
	{http.MethodPost, "", "/firewall/ipset/{ipset}"},
	{http.MethodDelete, "", "/firewall/ipset/{ipset}/{cidr}"},
	{http.MethodPost, "lxc", "/termproxy"},
	{http.MethodPost, "qemu", "/vncproxy"},
}

// Routes returns the table: the cluster and node calls, then each guest call per kind.
func Routes() []Route {
	out := []Route{
		{Method: http.MethodPost, Pattern: "/access/ticket", Direct: true},
		{Method: http.MethodGet, Pattern: "/cluster/resources"},
		{Method: http.MethodGet, Pattern: "/cluster/nextid"},
		{Method: http.MethodGet, Pattern: "/cluster/firewall/options"},
		{Method: http.MethodPut, Pattern: "/cluster/ha/resources/{sid}"},
		{Method: http.MethodGet, Pattern: "/nodes"},
		{Method: http.MethodGet, Pattern: "/storage"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/status"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/lxc"},
		{Method: http.MethodPost, Pattern: "/nodes/{node}/lxc"},
		{Method: http.MethodPost, Pattern: "/nodes/{node}/qemu"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/storage"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/storage/{storage}/content"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/storage/{storage}/content/{volume}"},
		{Method: http.MethodDelete, Pattern: "/nodes/{node}/storage/{storage}/content/{volume}"},
		{Method: http.MethodPost, Pattern: "/nodes/{node}/vzdump"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/vzdump/extractconfig"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/tasks/{upid}/status"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/tasks/{upid}/log"},
		{Method: http.MethodGet, Pattern: "/nodes/{node}/{kind}/{vmid}/vncwebsocket", Upgrade: true},
	}
	for _, g := range guestRoutes {
		kinds := []string{"lxc", "qemu"}
		if g.kind != "" {
			kinds = []string{g.kind}
		}
		for _, k := range kinds {
			out = append(out, Route{Method: g.method, Pattern: "/nodes/{node}/" + k + "/{vmid}" + g.suffix})
		}
	}
	return out
}

// routeTable is Routes split into segments, built once.
var routeTable = func() []compiledRoute {
	rs := Routes()
	out := make([]compiledRoute, 0, len(rs))
	for _, r := range rs {
		out = append(out, compiledRoute{Route: r, segs: strings.Split(strings.TrimPrefix(r.Pattern, "/"), "/")})
	}
	return out
}()

type compiledRoute struct {
	Route
	segs []string
}

// ErrNotAllowed is a call the route table does not hold; its text is the reason.
var ErrNotAllowed = errors.New("pve: call not in the route table")

// RouteError says why a call was refused: a short closed-set reason (for a metric label) and
// the detail.
type RouteError struct {
	Reason string
	Detail string
}

func (e *RouteError) Error() string { return "pve: call refused: " + e.Reason + ": " + e.Detail }

// Unwrap makes a RouteError match ErrNotAllowed.
func (e *RouteError) Unwrap() error { return ErrNotAllowed }

// Refusal reasons (closed set).
const (
	ReasonBadPath     = "bad_path"
	ReasonBadMethod   = "bad_method"
	ReasonNoRoute     = "no_route"
	ReasonBadParam    = "bad_parameter"
	ReasonUpgrade     = "upgrade_mismatch"
	ReasonDirectOnly  = "direct_only"
	ReasonNoAgentAuth = "no_console_user"
)

// Stream says whether a call is a plain request or a WebSocket upgrade.
type Stream int

// The two kinds of call.
const (
	PlainCall Stream = iota
	UpgradeCall
)

// MatchRoute finds the route of method and escapedPath (relative to /api2/json, as sent on
// the wire: a volume id's "/" is %2F inside one segment). The path is split on "/" first and
// each segment decoded on its own; ".", "..", empty segments and double encoding are refused.
// Only upgrade routes take a WebSocket upgrade, and only as one.
func MatchRoute(method, escapedPath string, kind Stream) (Route, error) {
	upgrade := kind == UpgradeCall
	segs, err := splitPath(escapedPath)
	if err != nil {
		return Route{}, err
	}
	methodSeen := false
	for _, r := range routeTable {
		if len(r.segs) != len(segs) || !matchSegments(r.segs, segs) {
			continue
		}
		if r.Method != method {
			methodSeen = true
			continue
		}
		if r.Upgrade != upgrade {
			return Route{}, &RouteError{Reason: ReasonUpgrade, Detail: method + " " + r.Pattern}
		}
		return r.Route, nil
	}
	if methodSeen {
		return Route{}, &RouteError{Reason: ReasonBadMethod, Detail: method + " " + escapedPath}
	}
	return Route{}, &RouteError{Reason: ReasonNoRoute, Detail: method + " " + escapedPath}
}

// splitPath decodes an escaped path segment by segment.
func splitPath(escaped string) ([]string, error) {
	if !strings.HasPrefix(escaped, "/") || escaped == "/" {
		return nil, &RouteError{Reason: ReasonBadPath, Detail: "path must start with / and name a resource"}
	}
	raw := strings.Split(escaped[1:], "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		d, err := decodeSegment(s)
		if err != nil {
			return nil, &RouteError{Reason: ReasonBadPath, Detail: fmt.Sprintf("segment %d: %v", i+1, err)}
		}
		out[i] = d
	}
	return out, nil
}

func decodeSegment(s string) (string, error) {
	if s == "" || s == "." || s == ".." {
		return "", fmt.Errorf("empty, . or .. segment")
	}
	d, err := unescapeSegment(s)
	if err != nil {
		return "", err
	}
	if strings.Contains(d, "%") {
		return "", fmt.Errorf("double encoding")
	}
	if d == "." || d == ".." || strings.ContainsAny(d, "\\?#") || strings.IndexFunc(d, isCtl) >= 0 {
		return "", fmt.Errorf("forbidden characters")
	}
	return d, nil
}

func isCtl(r rune) bool { return r < 0x20 || r == 0x7f }

// unescapeSegment decodes %XX; a malformed escape is an error.
func unescapeSegment(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("malformed escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("malformed escape")
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

func matchSegments(pattern, segs []string) bool {
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			if !placeholderOK(p, segs[i]) {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return true
}

var (
	identRe    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	snapnameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	ipsetRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	sidRe      = regexp.MustCompile(`^(ct|vm):[0-9]+$`)
	volumeRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z0-9._/+-]+$`)
)

// placeholderOK checks one decoded segment against a typed placeholder.
func placeholderOK(p, s string) bool {
	switch p {
	case "{node}", "{storage}":
		return identRe.MatchString(s)
	case "{kind}":
		return s == "lxc" || s == "qemu"
	case "{vmid}":
		n, err := strconv.Atoi(s)
		return err == nil && strconv.Itoa(n) == s && checkVMID(n) == nil
	case "{upid}":
		_, err := parseUPID(s)
		return err == nil && !strings.Contains(s, "/")
	case "{snapname}":
		return snapnameRe.MatchString(s)
	case "{ipset}":
		return ipsetRe.MatchString(s)
	case "{sid}":
		return sidRe.MatchString(s)
	case "{cidr}":
		return validCIDR(s)
	case "{volume}":
		return validVolume(s)
	}
	return false
}

func validCIDR(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// validVolume accepts a volume id (storage:path) whose path has no empty, . or .. part.
func validVolume(s string) bool {
	if !volumeRe.MatchString(s) {
		return false
	}
	_, rest, _ := strings.Cut(s, ":")
	for _, part := range strings.Split(rest, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// Headers between pvebill's client and an agent.
const (
	// HeaderAgentAuth "console" asks the agent to send the request with its console user's
	// ticket instead of its API token.
	HeaderAgentAuth = "Pvebill-Agent-Auth"
	// HeaderAgentRefused is set on an agent's refusal; its value is the reason.
	HeaderAgentRefused = "Pvebill-Agent-Refused"
	// HeaderAgentReason carries Proxmox's reason phrase, which HTTP/2 has no place for: the
	// client reads Proxmox's message from it when the body has none, as from the status line.
	HeaderAgentReason = "Pvebill-Agent-Reason"
)

// checkRoute refuses a call the route table does not hold, before anything is sent; a client
// that goes through an agent does not make the direct-only calls (the agent logs in itself).
func (c *Client) checkRoute(method, path string) error {
	r, err := MatchRoute(method, path, PlainCall)
	if err != nil {
		return err
	}
	if r.Direct && c.tunnel {
		return &RouteError{Reason: ReasonDirectOnly, Detail: method + " " + r.Pattern}
	}
	return nil
}

// waitKey marks a context whose calls wait for an agent to be connected.
type waitKey struct{}

// WaitForTunnel marks ctx so that a call through an agent that is not connected waits for one
// (until ctx ends) before it is sent, instead of failing at once: an operation's calls wait,
// an API read does not (R57). Without an agent the mark changes nothing.
func WaitForTunnel(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitKey{}, true)
}

// TunnelWaiter is a Config.Tunnel that can wait until it can carry a call.
type TunnelWaiter interface {
	WaitReady(ctx context.Context) error
}

// waitTunnel waits for the tunnel when ctx asks for it; the error is ctx's.
func (c *Client) waitTunnel(ctx context.Context) error {
	if !c.tunnel || ctx.Value(waitKey{}) == nil {
		return nil
	}
	w, ok := c.http.Transport.(TunnelWaiter)
	if !ok {
		return nil
	}
	return w.WaitReady(ctx)
}
