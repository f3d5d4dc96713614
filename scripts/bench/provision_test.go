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
	"pvebill/modules"
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

func isPoll(path string) bool {
	return strings.Contains(path, "/tasks/") && strings.HasSuffix(path, "/status")
}

// work sums the service time of served requests, task-status polls counted once per task (the
// one read that must see it stopped; further polls are the client's cost), and separately the
// part the entry node serves (cluster-wide paths).
func work(log []pvesim.Served) (total, entry time.Duration, calls int) {
	polls := map[string]time.Duration{}
	for _, r := range log {
		if isPoll(r.Path) {
			if d, ok := polls[r.Path]; !ok || r.Service() < d {
				polls[r.Path] = r.Service()
			}
			continue
		}
		calls++
		total += r.Service()
		if !strings.HasPrefix(r.Path, "/nodes/") {
			entry += r.Service()
		}
	}
	for _, d := range polls {
		total += d
	}
	return total, entry, calls + len(polls)
}

func provisioning(t *testing.T, rep *Report) {
	const sc = "3 provisioning"
	nodes, creates, conc := scale(4, 2), scale(1000, 20), 32
	task := scale(2*time.Second, 100*time.Millisecond)
	model := pvesim.ServiceModel{Workers: 3, Seed: 2}
	if !*full {
		model.Median = func(m, p string, n int) time.Duration { return pvesim.DefaultMedian(m, p, n) / 20 }
	}
	sim := provSim(t, nodes, task)
	busy := sim.Busy(model)
	hs := httptest.NewServer(busy)
	t.Cleanup(hs.Close)
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	st := newStack(t, openDB(t, dialect(t)), pc, scale(256, 8), logger)
	st.exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.exec.Stop(ctx)
	})
	api := httptest.NewServer(st.srv)
	t.Cleanup(api.Close)

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
	w1, e1, calls1 := work(busy.Served())
	busy.ResetLog()
	// The ideal: every create needs the single create's work; no schedule ends before one
	// create's chain (its calls in sequence and its two tasks), before that work for all creates
	// is spread over every worker of every node, or before the cluster-wide part is done by the
	// entry node's workers.
	bound := max(w1+2*task, w1*time.Duration(creates)/time.Duration(nodes*model.Workers),
		e1*time.Duration(creates)/time.Duration(model.Workers))

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
		if err := st.db.Gorm.Model(&models.Operation{}).
			Where("state IN ?", []string{models.OpSucceeded, models.OpFailed, models.OpNeedsReconciliation}).Count(&done).Error; err != nil {
			t.Fatal(err)
		}
		if done >= int64(creates+1) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	served := busy.Served()
	perNode := map[string]int{}
	for i := range nodes {
		perNode[fmt.Sprintf("node%02d", i+1)] = 0
	}
	for _, r := range served {
		perNode[r.Node]++
	}
	wAll, _, _ := work(served)

	var succeeded, failed int64
	st.db.Gorm.Model(&models.Operation{}).Where("action = ? AND state = ?", "create", models.OpSucceeded).Count(&succeeded)
	st.db.Gorm.Model(&models.Operation{}).Where("action = ? AND state IN ?", "create",
		[]string{models.OpFailed, models.OpNeedsReconciliation}).Count(&failed)
	var codes []struct {
		Code  string
		Count int
	}
	st.db.Gorm.Raw(`SELECT error_code AS code, COUNT(*) AS count FROM operations WHERE state = ? GROUP BY error_code`,
		models.OpFailed).Scan(&codes)
	var why []string
	for _, c := range codes {
		why = append(why, fmt.Sprintf("%s %d", c.Code, c.Count))
	}
	var rows int64
	st.db.Gorm.Model(&models.Operation{}).Where("action = ?", "create").Count(&rows)
	lost := int64(creates+1) - rows
	unfinished := rows - succeeded - failed
	var dupVMIDs int64
	if err := st.db.Gorm.Raw(`SELECT COUNT(*) FROM (SELECT cluster, vmid FROM services WHERE vmid IS NOT NULL
		GROUP BY cluster, vmid HAVING COUNT(*) > 1) d`).Scan(&dupVMIDs).Error; err != nil {
		t.Fatal(err)
	}
	// Duplicate guests: more than one container in the simulator carrying one service's stamp.
	stamps := map[string]int{}
	guests := 0
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/lxc") && r.Status == http.StatusOK {
			guests++
		}
	}
	var svcs []models.Service
	st.db.Gorm.Find(&svcs)
	for _, s := range svcs {
		if s.VMID == nil {
			continue
		}
		g, ok := sim.Guest(*s.VMID)
		if !ok {
			continue
		}
		for _, sv := range svcs {
			if modules.HasStamp(g.Config["description"], sv.ServiceID) {
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
	// The bound again, with every create placed as pvebill placed the guests it made (most free
	// memory first): the busiest node's share of the node-side work on its workers.
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
	rep.info(sc, "completion time", elapsed.Seconds(), "s", fmt.Sprintf("ideal bound %.1f s from a single create's %d calls, %.0f ms of service",
		bound.Seconds(), calls1, ms(w1)))
	rep.target(sc, "completion time / ideal bound", elapsed.Seconds()/bound.Seconds(), "x", "<=", 1.25, false, "")
	rep.info(sc, "completion time / bound with pvebill's placement", elapsed.Seconds()/placedBound.Seconds(), "x",
		fmt.Sprintf("%.1f s: the busiest node's share of the node-side work on its %d workers", placedBound.Seconds(), model.Workers))
	rep.info(sc, "Proxmox calls per create, all at once", float64(len(served))/float64(creates), "",
		fmt.Sprintf("%d alone; %.0f ms of service per create (one poll a task); requests per node: %s",
			calls1, ms(wAll)/float64(creates), strings.Join(spread, ", ")))
	rep.target(sc, "duplicate VMIDs", float64(dupVMIDs), "", "==", 0, true, "")
	rep.target(sc, "duplicate guests", float64(dupGuests), "", "==", 0, true,
		fmt.Sprintf("%d containers created: %s", guests, strings.Join(where, ", ")))
	rep.target(sc, "creates failed", float64(failed), "", "==", 0, true, strings.Join(why, ", "))
	rep.target(sc, "operations lost", float64(lost), "", "==", 0, true, "accepted creates without an operation row")
	rep.target(sc, "creates not ended by the deadline", float64(unfinished), "", "==", 0, true, "")
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
// end to end minus the task time, and the task-status polls per task.
func taskWait(t *testing.T, rep *Report) {
	const sc = "4 task wait"
	task, runs := scale(10*time.Second, 200*time.Millisecond), scale(3, 1)
	sim := provSim(t, 2, task)
	hs := httptest.NewServer(sim)
	t.Cleanup(hs.Close)
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	st := newStack(t, openDB(t, dialect(t)), pc, 4, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	st.exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.exec.Stop(ctx)
	})
	api := httptest.NewServer(st.srv)
	t.Cleanup(api.Close)
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
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		e2e := time.Since(t0)
		if resp.StatusCode != http.StatusOK || body.Operation.State != models.OpSucceeded {
			t.Fatalf("create %s: %d %s", id, resp.StatusCode, body.Operation.State)
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
	rep.target(sc, "end to end minus 2T, median", median(overheads), "ms", "<=", 300, false,
		fmt.Sprintf("max %.0f ms; of it %.0f ms (median) polling past the tasks' ends", maxOf(overheads), median(pasts)))
	rep.target(sc, "task-status polls per task of T", float64(maxPolls), "", "<=", 10, *full,
		fmt.Sprintf("%.1f on average", float64(polls.Load())/float64(2*runs)))
}
