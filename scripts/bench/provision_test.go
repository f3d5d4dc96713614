package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
)

// provSim is a simulated cluster ready for container creates, served behind handler h (the
// simulator itself or its busy front).
func provSim(t *testing.T, nodes int, task time.Duration) *pvesim.Sim {
	t.Helper()
	var names []string
	for i := range nodes {
		names = append(names, fmt.Sprintf("node%02d", i+1))
	}
	sim := pvesim.New(pvesim.Options{Nodes: names, TokenID: tokenID, TokenSecret: tokenSecret, Seed: 3, TaskDuration: task})
	sim.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126<<20, "vztmpl")
	return sim
}

// roomySim is provSim with memory and disk room for every create (placement counts both, R52).
func roomySim(t *testing.T, nodes int, task time.Duration) *pvesim.Sim {
	sim := provSim(t, nodes, task)
	sim.SetStorageTotal("local-lvm", 1<<46)
	for i := range nodes {
		sim.SetNodeOptions(fmt.Sprintf("node%02d", i+1), pvesim.NodeOptions{MemoryBytes: 1 << 40})
	}
	return sim
}

// serveStack serves Proxmox through h, runs pvebill's stack against it with an executor of
// workers, and serves pvebill's API, all until the test ends.
func serveStack(t *testing.T, h http.Handler, workers int) (*stack, *httptest.Server) {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	st := newStack(t, openDB(t, dialect(t)), pc, workers, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	st.exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.exec.Stop(ctx)
	})
	api := httptest.NewServer(st.srv)
	t.Cleanup(api.Close)
	return st, api
}

func isPoll(path string) bool {
	return strings.Contains(path, "/tasks/") && strings.HasSuffix(path, "/status")
}

// work sums the service time of served requests, task-status polls counted once per task (the
// one read that must see it stopped; further polls are the client's cost), and separately the
// part the entry node serves (cluster-wide paths). With mean set, each request counts its
// shape's mean service time instead of its own.
func work(log []pvesim.Served, mean map[string]time.Duration) (total, entry time.Duration, calls int) {
	service := func(r pvesim.Served) time.Duration {
		if d, ok := mean[shape(r.Method, r.Path)]; ok {
			return d
		}
		return r.Service()
	}
	polls := map[string]time.Duration{}
	for _, r := range log {
		if isPoll(r.Path) {
			if d, ok := polls[r.Path]; !ok || service(r) < d {
				polls[r.Path] = service(r)
			}
			continue
		}
		calls++
		total += service(r)
		if !strings.HasPrefix(r.Path, "/nodes/") {
			entry += service(r)
		}
	}
	for _, d := range polls {
		total += d
	}
	return total, entry, calls + len(polls)
}

// meanService is the mean service time of each request shape in a log.
func meanService(log []pvesim.Served) map[string]time.Duration {
	sum, n := map[string]time.Duration{}, map[string]int{}
	for _, r := range log {
		k := shape(r.Method, r.Path)
		sum[k] += r.Service()
		n[k]++
	}
	out := make(map[string]time.Duration, len(sum))
	for k, d := range sum {
		out[k] = d / time.Duration(n[k])
	}
	return out
}

func provisioning(t *testing.T, rep *Report) {
	const sc = "3 provisioning"
	nodes, creates, conc := scale(4, 2), scale(1000, 20), 32
	task := scale(2*time.Second, 100*time.Millisecond)
	model := pvesim.ServiceModel{Workers: 3, Seed: 2}
	if !*full {
		model.Median = func(m, p string, n int) time.Duration { return pvesim.DefaultMedian(m, p, n) / 20 }
	}
	// Memory and disk room for all 1,000 in flight at once: on four nodes of the simulator's own
	// figures placement refused most of them (R52), which is not what this measures.
	sim := roomySim(t, nodes, task)
	busy := sim.Busy(model)
	st, api := serveStack(t, busy, scale(256, 8))

	// One create alone first: the calls a create needs and their service times, uncontended.
	single := signedRequest(http.MethodPost, api.URL+"/v1/services?wait=60", createBody("prov-single"))
	resp, err := http.DefaultClient.Do(single)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("single create: %d", resp.StatusCode)
	}
	alone := busy.Served()
	busy.ResetLog()
	// The ideal: every create needs the single create's work; no schedule ends before one
	// create's chain (its calls in sequence and its two tasks), before that work for all creates
	// is spread over every worker of every node, or before the cluster-wide part is done by the
	// entry node's workers.
	idealBound := func(w1, e1 time.Duration) time.Duration {
		return max(w1+2*task, w1*time.Duration(creates)/time.Duration(nodes*model.Workers),
			e1*time.Duration(creates)/time.Duration(model.Workers))
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	start := time.Now()
	_, _ = load(t, client, creates, conc, http.StatusAccepted, func(i int) *http.Request {
		id := fmt.Sprintf("prov-%05d", i)
		req := signedRequest(http.MethodPost, api.URL+"/v1/services", createBody(id))
		req.Header.Set("Idempotency-Key", "create-"+id)
		return req
	})
	submitted := time.Since(start)
	// The creates get a deadline that keeps make bench within its budget; what has not ended
	// by then counts as lost.
	deadline := time.Now().Add(scale(4*time.Minute, time.Minute))
	var done int64
	for time.Now().Before(deadline) {
		done = dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE state IN ?",
			[]string{models.OpSucceeded, models.OpFailed, models.OpNeedsReconciliation})
		if done >= int64(creates+1) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	served := busy.Served()
	// The single create's calls, each at its shape's mean service time over the whole run
	// (thousands of draws), so that the bound does not hang on the single create's 18 draws;
	// calls the creates made beyond the single create's, and polls beyond one a task, are not
	// in it.
	w1, e1, calls1 := work(alone, meanService(served))
	bound := idealBound(w1, e1)
	drawn1, drawnE1, _ := work(alone, nil)
	drawnBound := idealBound(drawn1, drawnE1)
	perNode := map[string]int{}
	for i := range nodes {
		perNode[fmt.Sprintf("node%02d", i+1)] = 0
	}
	for _, r := range served {
		perNode[r.Node]++
	}
	wAll, _, _ := work(served, nil)

	succeeded := dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state = ?", "create", models.OpSucceeded)
	failed := dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state IN ?", "create",
		[]string{models.OpFailed, models.OpNeedsReconciliation})
	var codes []struct {
		Code  string
		Count int
	}
	dbtest.Scan(t, st.db, &codes, `SELECT error_code AS code, COUNT(*) AS count FROM operations WHERE state = ? GROUP BY error_code`,
		models.OpFailed)
	var why []string
	for _, c := range codes {
		why = append(why, fmt.Sprintf("%s %d", c.Code, c.Count))
	}
	rows := dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE action = ?", "create")
	lost := int64(creates+1) - rows
	unfinished := rows - succeeded - failed
	dupVMIDs := dbtest.Count(t, st.db, `SELECT COUNT(*) FROM (SELECT cluster, vmid FROM services WHERE vmid IS NOT NULL
		GROUP BY cluster, vmid HAVING COUNT(*) > 1) d`)
	// Duplicate guests: more than one container in the simulator carrying one service's stamp.
	stamps := map[string]int{}
	guests := 0
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/lxc") && r.Status == http.StatusOK {
			guests++
		}
	}
	var svcs []models.Service
	dbtest.Scan(t, st.db, &svcs, "SELECT * FROM services")
	for _, s := range svcs {
		if s.VMID == nil {
			continue
		}
		g, ok := sim.Guest(*s.VMID)
		if !ok {
			continue
		}
		for _, sv := range svcs {
			if kinds.HasStamp(g.Config["description"], kinds.Guest{ClientID: sv.ClientID, ServiceID: sv.ServiceID}) {
				stamps[sv.ServiceID]++
			}
		}
	}
	placed := map[string]int{}
	for _, s := range svcs {
		if s.VMID != nil {
			if g, ok := sim.Guest(*s.VMID); ok {
				placed[g.Node]++
			}
		}
	}
	var where []string
	for _, n := range sortedNodes(placed) {
		where = append(where, fmt.Sprintf("%s %d", n, placed[n]))
	}
	busiest, created := 0, 0
	for _, n := range placed {
		busiest = max(busiest, n)
		created += n
	}
	// The bound again, with every create placed as pvebill placed the guests it made (fewest
	// creates in flight, then most free memory): the busiest node's share of the node-side work
	// on its workers.
	placedBound := bound
	if created > 0 {
		placedBound = max(bound, (w1-e1)*time.Duration(creates)*time.Duration(busiest)/time.Duration(created*model.Workers))
	}
	dupGuests := 0
	for _, n := range stamps {
		if n > 1 {
			dupGuests++
		}
	}
	var spread []string
	for _, n := range sortedNodes(perNode) {
		spread = append(spread, fmt.Sprintf("%s %d", n, perNode[n]))
	}
	rep.info(sc, "creates", float64(creates), "", fmt.Sprintf("%d nodes x %d workers, task time %v, submitted in %.1f s",
		nodes, model.Workers, task, submitted.Seconds()))
	rep.info(sc, "completion time", elapsed.Seconds(), "s", fmt.Sprintf("ideal bound %.1f s from a single create's %d calls at the run's mean service time of each (%.0f ms in all)",
		bound.Seconds(), calls1, ms(w1)))
	rep.target(sc, "completion time / ideal bound", elapsed.Seconds()/bound.Seconds(), "x", "<=", 1.25, false, "")
	rep.info(sc, "completion time / the bound from the single create's own draws", elapsed.Seconds()/drawnBound.Seconds(), "x",
		fmt.Sprintf("%.0f ms of service drawn for its calls", ms(drawn1)))
	rep.info(sc, "completion time / bound with pvebill's placement", elapsed.Seconds()/placedBound.Seconds(), "x",
		fmt.Sprintf("%.1f s: the busiest node's share of the node-side work on its %d workers", placedBound.Seconds(), model.Workers))
	rep.info(sc, "Proxmox calls per create, all at once", float64(len(served))/float64(creates), "",
		fmt.Sprintf("%d alone; %.0f ms of service per create (one poll a task); requests per node: %s",
			calls1, ms(wAll)/float64(creates), strings.Join(spread, ", ")))
	pollsAlone, pollsAll := 0, 0
	for _, r := range alone {
		if isPoll(r.Path) {
			pollsAlone++
		}
	}
	busyPer := map[string]time.Duration{}
	for _, r := range served {
		busyPer[r.Node] += r.Service()
		if isPoll(r.Path) {
			pollsAll++
		}
	}
	rep.info(sc, "calls per create beyond a lone create's, polls left out",
		float64(len(served)-pollsAll)/float64(creates)-float64(len(alone)-pollsAlone), "", extraCalls(alone, served, creates))
	rep.info(sc, "task-status polls per create", float64(pollsAll)/float64(creates), "", fmt.Sprintf("%d alone", pollsAlone))
	var util []string
	for _, n := range sortedNodes(perNode) {
		util = append(util, fmt.Sprintf("%s %.0f%%", n, 100*busyPer[n].Seconds()/(elapsed.Seconds()*float64(model.Workers))))
	}
	var busyAll time.Duration
	for _, d := range busyPer {
		busyAll += d
	}
	rep.info(sc, "node workers busy over the run", 100*busyAll.Seconds()/(elapsed.Seconds()*float64(nodes*model.Workers)), "%",
		strings.Join(util, ", ")+"; per 10 s of the run: "+timeline(served, start, elapsed, nodes*model.Workers))
	rep.target(sc, "duplicate VMIDs", float64(dupVMIDs), "", "==", 0, true, "")
	rep.target(sc, "duplicate guests", float64(dupGuests), "", "==", 0, true,
		fmt.Sprintf("%d containers created: %s", guests, strings.Join(where, ", ")))
	rep.target(sc, "creates failed", float64(failed), "", "==", 0, true, strings.Join(why, ", "))
	rep.target(sc, "operations lost", float64(lost), "", "==", 0, true, "accepted creates without an operation row")
	rep.target(sc, "creates not ended by the deadline", float64(unfinished), "", "==", 0, true, "")
}

// shape is a request's method and path with node names, vmids and UPIDs replaced by their
// parameter names.
func shape(method, path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		switch {
		case i == 1 && parts[0] == "nodes":
			parts[i] = "{node}"
		case strings.HasPrefix(p, "UPID:"):
			parts[i] = "{upid}"
		case p != "" && strings.Trim(p, "0123456789") == "":
			parts[i] = "{vmid}"
		}
	}
	return method + " /" + strings.Join(parts, "/")
}

// extraCalls names the request shapes (task-status polls left out) a create made more often
// when all creates ran at once than when one ran alone, with the calls per create they added,
// most first.
func extraCalls(alone, all []pvesim.Served, creates int) string {
	one, many := map[string]int{}, map[string]int{}
	for _, r := range alone {
		if !isPoll(r.Path) {
			one[shape(r.Method, r.Path)]++
		}
	}
	for _, r := range all {
		if !isPoll(r.Path) {
			many[shape(r.Method, r.Path)]++
		}
	}
	type extra struct {
		shape string
		per   float64
	}
	var out []extra
	for k, n := range many {
		if per := float64(n)/float64(creates) - float64(one[k]); per >= 0.05 {
			out = append(out, extra{k, per})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].per > out[j].per })
	var b []string
	for _, e := range out {
		b = append(b, fmt.Sprintf("%s +%.2f", e.shape, e.per))
	}
	if len(b) == 0 {
		return "none"
	}
	return strings.Join(b, ", ")
}

// timeline is the share of all node workers busy in each 10 s of the run.
func timeline(served []pvesim.Served, start time.Time, elapsed time.Duration, workers int) string {
	const slot = 10 * time.Second
	busy := make([]time.Duration, int(elapsed/slot)+1)
	for _, r := range served {
		for t := r.Started; t.Before(r.Ended); {
			k := int(t.Sub(start) / slot)
			end := start.Add(time.Duration(k+1) * slot)
			if end.After(r.Ended) {
				end = r.Ended
			}
			if k >= 0 && k < len(busy) {
				busy[k] += end.Sub(t)
			}
			t = end
		}
	}
	out := make([]string, len(busy))
	for k, d := range busy {
		out[k] = fmt.Sprintf("%.0f%%", 100*d.Seconds()/(slot.Seconds()*float64(workers)))
	}
	return strings.Join(out, " ")
}

func sortedNodes(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// taskWait runs single creates one after another against the simulator without a service-time
// model, the create and start tasks each taking T, and measures the signed create with ?wait=60
// end to end minus the task time, and the task-status polls per task. The first create of the
// process is reported on its own: the client has not yet seen a task of either type end, so it
// polls with its plain back-off; the target is held to the creates after it.
func taskWait(t *testing.T, rep *Report) {
	const sc = "4 task wait"
	task, runs := scale(10*time.Second, 200*time.Millisecond), scale(4, 2)
	sim := provSim(t, 2, task)
	_, api := serveStack(t, sim, 4)
	var overheads, pasts []float64
	var polls atomic.Int64
	var mu sync.Mutex
	maxPolls := 0
	for i := range runs {
		sim.ResetLog()
		id := fmt.Sprintf("wait-%02d", i)
		req := signedRequest(http.MethodPost, api.URL+"/v1/services?wait=60", createBody(id))
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Operation struct {
				State string `json:"state"`
			} `json:"operation"`
		}
		decodeErr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		e2e := time.Since(t0)
		if decodeErr != nil || resp.StatusCode != http.StatusOK || body.Operation.State != models.OpSucceeded {
			t.Fatalf("create %s: %d %s %v", id, resp.StatusCode, body.Operation.State, decodeErr)
		}
		perTask := map[string]int{}
		var starts []time.Time // the task-starting POSTs (create, start), in order
		var order []string     // the polled tasks, in order of their first poll
		last := map[string]time.Time{}
		for _, r := range sim.Requests() {
			switch {
			case isPoll(r.Path):
				if perTask[r.Path] == 0 {
					order = append(order, r.Path)
				}
				perTask[r.Path]++
				last[r.Path] = r.Time
			case r.Method == http.MethodPost:
				starts = append(starts, r.Time)
			}
		}
		// How long the client kept waiting after each task had ended: the poll that saw it
		// stopped came this much after the task's start plus T.
		var past time.Duration
		for i, p := range order {
			if i < len(starts) {
				past += last[p].Sub(starts[i].Add(task))
			}
		}
		pasts = append(pasts, ms(past))
		mu.Lock()
		for _, n := range perTask {
			polls.Add(int64(n))
			maxPolls = max(maxPolls, n)
		}
		mu.Unlock()
		overheads = append(overheads, (e2e-2*task).Seconds()*1000)
	}
	rep.info(sc, "task time T", task.Seconds(), "s", fmt.Sprintf("single creates, the create and the start task T each, %d runs", runs))
	rep.info(sc, "end to end minus 2T, first create of the process", overheads[0], "ms",
		fmt.Sprintf("%.0f ms of it polling past the tasks' ends, before any task of the type was seen ending", pasts[0]))
	rep.target(sc, "end to end minus 2T, median", median(overheads[1:]), "ms", "<=", 300, false,
		fmt.Sprintf("the %d creates after the first; max %.0f ms; of it %.0f ms (median) polling past the tasks' ends",
			runs-1, maxOf(overheads[1:]), median(pasts[1:])))
	rep.target(sc, "task-status polls per task of T", float64(maxPolls), "", "<=", 10, *full,
		fmt.Sprintf("%.1f on average", float64(polls.Load())/float64(2*runs)))
}
