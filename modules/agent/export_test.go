package agent

// What the hub knows of its tunnels, read by this package's tests so that they wait on the
// hub's own view instead of on the clock. Compiled into the tests only.

// SilentTunnels counts the cluster's tunnels that have read nothing for longer than a ping's
// round: new calls avoid them while another tunnel takes calls.
func (h *Hub) SilentTunnels(cluster string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range h.tunnels[cluster] {
		if t.silentFor() > h.o.Liveness.silentAfter() {
			n++
		}
	}
	return n
}

// Accepting counts the cluster's tunnels that take a new call now: not one whose agent said it
// is going away (an HTTP/2 GOAWAY; its calls in flight go on) nor one that has ended.
func (h *Hub) Accepting(cluster string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range h.tunnels[cluster] {
		if t.cc.Err() == nil && t.cc.Available() > 0 && !t.superseded.Load() {
			n++
		}
	}
	return n
}
