package pve

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the client's Prometheus series. One Metrics value is shared by
// every Client of the process (one per cluster); the cluster label tells them
// apart. A nil *Metrics records nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics creates the client metrics and registers them on reg (when reg
// is not nil):
//
//	pvebill_proxmox_requests_total{cluster,node,endpoint,code}
//	pvebill_proxmox_request_duration_seconds{cluster,node,endpoint}
//
// endpoint is the path template ("/nodes/{node}/lxc/{vmid}/status/current"),
// node is the node named in the path or "" for cluster-wide paths, and code is
// the HTTP status or "error" for a network failure. Every attempt of a retried
// request is counted.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pvebill_proxmox_requests_total",
			Help: "Proxmox VE API requests, by endpoint template and HTTP status (\"error\" for network failures).",
		}, []string{"cluster", "node", "endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pvebill_proxmox_request_duration_seconds",
			Help:    "Duration of Proxmox VE API requests, by endpoint template.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"cluster", "node", "endpoint"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration)
	}
	return m
}

func (m *Metrics) observe(cluster, path string, status int, d time.Duration) {
	if m == nil {
		return
	}
	endpoint, node := endpointTemplate(path)
	code := "error"
	if status > 0 {
		code = strconv.Itoa(status)
	}
	m.requests.WithLabelValues(cluster, node, endpoint, code).Inc()
	m.duration.WithLabelValues(cluster, node, endpoint).Observe(d.Seconds())
}

// placeholders maps a path segment to the placeholder that replaces the
// segment after it.
var placeholders = map[string]string{
	"nodes":    "{node}",
	"lxc":      "{vmid}",
	"qemu":     "{vmid}",
	"tasks":    "{upid}",
	"storage":  "{storage}",
	"content":  "{volume}",
	"ipset":    "{name}",
	"aliases":  "{name}",
	"groups":   "{group}",
	"rules":    "{pos}",
	"pools":    "{poolid}",
	"snapshot": "{snapname}",
}

// endpointTemplate turns a request path into its template and returns the
// node named in it. Identifiers are replaced by placeholders so the label set
// stays bounded: "/nodes/pve1/lxc/5001/status/current" becomes
// "/nodes/{node}/lxc/{vmid}/status/current" and node "pve1". A segment that is
// not a known fixed name and carries a digit or an unusual character is
// replaced by "{param}".
func endpointTemplate(path string) (endpoint, node string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		if ph, ok := placeholders[seg]; ok && i+1 < len(segs) {
			// A collection name followed by a segment: that segment is an
			// identifier (a bare collection such as /nodes/{node}/lxc stays).
			if seg == "nodes" && i == 0 {
				node = segs[i+1]
			}
			segs[i+1] = ph
			i++
			continue
		}
		if !plainSegment(seg) {
			segs[i] = "{param}"
		}
	}
	return "/" + strings.Join(segs, "/"), node
}

func plainSegment(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' && r != '-' {
			return false
		}
	}
	return true
}
