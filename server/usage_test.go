package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

func seedUsageService(t *testing.T, h *harness, id, client, plan string, vmid int) {
	t.Helper()
	svc := &models.Service{ServiceID: id, ClientID: client, Plan: plan, GuestType: "container", Cluster: "default",
		Node: "pve1", VMID: &vmid, State: models.ServiceActive}
	if err := h.db.InsertService(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	// Created well before any period the tests ask for.
	dbtest.SetServiceCreated(t, h.db, id, h.clock().Add(-72*time.Hour))
}

func i64p(v int64) *int64 { return &v }

// GET /v1/usage as docs/api.md shows it: the numbers of the stored buckets, null where unknown, the
// current bucket partial, pages by cursor, another client's service a 404, bad queries 422 —
// and every answer conforms to openapi.yaml.
// R34: GET /v1/usage over HTTP, as docs/api.md shows it.
func TestUsageReportOverHTTP(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) { testUsageReportOverHTTP(t, d) })
	}
}

func testUsageReportOverHTTP(t *testing.T, dialect string) {
	h := newHarness(t, dialect)
	ctx := t.Context()
	if r := h.admin("PUT", "/v1/admin/plans/ct-2g", planBody(t, "container", map[string]any{"bandwidth_gib": 100})); r.Status != 201 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	seedUsageService(t, h, "u-1", "whmcs", "ct-2g", 5001)
	seedUsageService(t, h, "u-2", "whmcs", "ct-2g", 5002)
	seedUsageService(t, h, "u-other", "other", "ct-2g", 5003)

	cur := usage.BucketStart(h.clock())
	prev := cur.Add(-usage.BucketWidth)
	b := func(id string, start time.Time, samples int, swapSum, swapMax int64, in *int64) models.UsageBucket {
		owner := "whmcs"
		if id == "u-other" {
			owner = "other"
		}
		return models.UsageBucket{ClientID: owner, ServiceID: id, BucketStart: start.Unix(), Cluster: "default", Node: "pve1", VMID: 5001,
			GuestType: "container", UsageFigures: models.UsageFigures{Samples: int64(samples), SwapSamples: int64(samples),
				SwapSum: swapSum, SwapMax: i64p(swapMax), SwapLimit: i64p(512 << 20), MemSum: int64(samples) * 1000,
				MemMax: i64p(1000), CPUSum: 0.5 * float64(samples), DiskMax: i64p(4096), NetIn: in, NetOut: in},
			LastSample: start.Unix()}
	}
	if err := h.db.UpsertUsageBuckets(ctx, []models.UsageBucket{
		b("u-1", prev, 5, 5000, 2000, i64p(700)),
		b("u-1", cur, 1, 300, 300, nil),
		b("u-other", cur, 1, 1, 1, nil),
	}); err != nil {
		t.Fatal(err)
	}
	from, to := prev.Add(-time.Hour), cur.Add(time.Hour)
	q := url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "granularity": {"5m"}, "limit": {"1"}}
	path := "/v1/usage?" + q.Encode()
	r := h.billing("GET", path, nil)
	conformUsage(t, path, r, 200)
	m := r.json(t)
	svcs := m["services"].([]any)
	if len(svcs) != 1 || m["next_cursor"] != "u-1/whmcs" {
		t.Fatalf("page 1: %s", r.Body)
	}
	s1 := svcs[0].(map[string]any)
	want := map[string]any{"service_id": "u-1", "netin_bytes": 700.0, "netout_bytes": 700.0, "disk_max_bytes": 4096.0,
		"memory_avg_bytes": 1000.0, "memory_max_bytes": 1000.0, "swap_avg_bytes": float64(5300 / 6), "swap_max_bytes": 2000.0,
		"cpu_avg": 0.5, "bandwidth_limit_bytes": float64(100 << 30), "disk_limit_bytes": float64(20 << 30), "samples": 6.0}
	for k, v := range want {
		if s1[k] != v {
			t.Errorf("%s = %v, want %v", k, s1[k], v)
		}
	}
	bk := s1["buckets"].([]any)
	if len(bk) != 2 || bk[0].(map[string]any)["partial"] != false || bk[1].(map[string]any)["partial"] != true ||
		bk[1].(map[string]any)["samples"] != 1.0 || bk[1].(map[string]any)["netin_bytes"] != nil {
		t.Fatalf("buckets: %v", bk)
	}

	q.Set("cursor", m["next_cursor"].(string))
	path = "/v1/usage?" + q.Encode()
	r = h.billing("GET", path, nil)
	conformUsage(t, path, r, 200)
	m = r.json(t)
	svcs = m["services"].([]any)
	if len(svcs) != 1 || m["next_cursor"] != nil {
		t.Fatalf("page 2: %s", r.Body)
	}
	s2 := svcs[0].(map[string]any)
	for _, k := range []string{"netin_bytes", "netout_bytes", "disk_max_bytes", "memory_avg_bytes", "swap_avg_bytes", "swap_max_bytes", "cpu_avg"} {
		if v, ok := s2[k]; !ok || v != nil {
			t.Errorf("u-2 %s = %v (present %v), want null", k, v, ok)
		}
	}

	// One service; another client's is not found; an admin sees it.
	one := url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "service_id": {"u-other"}}
	path = "/v1/usage?" + one.Encode()
	conformUsage(t, path, h.billing("GET", path, nil), 404)
	if r := h.admin("GET", path, nil); r.Status != 200 || len(r.json(t)["services"].([]any)) != 1 {
		t.Fatalf("admin: %d %s", r.Status, r.Body)
	}

	for _, g := range []string{"1h", "1d"} {
		path := "/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "granularity": {g}}.Encode()
		if r := h.billing("GET", path, nil); r.Status != 200 || len(r.json(t)["services"].([]any)) == 0 {
			t.Fatalf("granularity %s: %d %s", g, r.Status, r.Body)
		}
	}
	for _, bad := range []string{
		"/v1/usage",
		"/v1/usage?from=yesterday&to=" + url.QueryEscape(to.Format(time.RFC3339)),
		"/v1/usage?from=" + url.QueryEscape(to.Format(time.RFC3339)) + "&to=" + url.QueryEscape(from.Format(time.RFC3339)),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "granularity": {"15m"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {from.Add(100 * 24 * time.Hour).Format(time.RFC3339)}, "granularity": {"1h"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "limit": {"5000"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "granularty": {"5m"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {from.Add(40 * 24 * time.Hour).Format(time.RFC3339)}, "granularity": {"5m"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "granularity": {"5m"}, "limit": {"500"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "cursor": {"u-1/"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "cursor": {"u-1/whmcs/x"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "cursor": {"u-1/who m"}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "client": {""}}.Encode(),
		"/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "client": {"whmcs\n"}}.Encode(),
	} {
		r := h.billing("GET", bad, nil)
		checkProblem(t, r, 422, "validation_failed")
	}
	r = h.signed("GET", "/v1/usage?"+one.Encode(), "shop", shopSecret, nil)
	checkProblem(t, r, 403, "forbidden")
}

// R46: an admin's report pages by (service_id, client_id). Services of three clients share ids;
// at every page size the pages, chained by next_cursor, name each (client, service) exactly once
// and in that order, and the last page's next_cursor is null. A cursor of a service id alone
// (from before service ids were per client) still chains: it starts after every service of
// that id.
func TestUsagePagesSharedIDsOnce(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			h := newHarness(t, d)
			if r := h.admin("PUT", "/v1/admin/plans/ct-2g", planBody(t, "container", nil)); r.Status != 201 {
				t.Fatalf("plan: %d %s", r.Status, r.Body)
			}
			var want []string
			vmid := 6000
			for _, sid := range []string{"0", "1", "1042", "2", "9"} {
				for _, client := range []string{"alpha", "other", "whmcs"} {
					if sid == "9" && client != "other" || sid == "2" && client == "alpha" {
						continue
					}
					vmid++
					seedUsageService(t, h, sid, client, "ct-2g", vmid)
					want = append(want, sid+"/"+client)
				}
			}
			period := url.Values{"from": {h.clock().Add(-time.Hour).Format(time.RFC3339)}, "to": {h.clock().Add(time.Hour).Format(time.RFC3339)}}
			for size := 1; size <= len(want)+1; size++ {
				if got := usagePages(t, h, period, size, ""); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Fatalf("page size %d: %v, want %v", size, got, want)
				}
			}
			if got := usagePages(t, h, period, 2, "1"); strings.Join(got, " ") != strings.Join(want[6:], " ") {
				t.Fatalf("after the one-part cursor 1: %v, want %v", got, want[6:])
			}
		})
	}
}

// usagePages follows an admin's report from cursor (none when "") through its last page, limit
// services a page, and returns the "service_id/client_id" of each service listed.
func usagePages(t *testing.T, h *harness, period url.Values, limit int, cursor string) []string {
	t.Helper()
	var got []string
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("page size %d: the pages do not end", limit)
		}
		q := url.Values{"from": period["from"], "to": period["to"], "limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		path := "/v1/usage?" + q.Encode()
		r := h.admin("GET", path, nil)
		conformUsage(t, path, r, 200)
		m := r.json(t)
		svcs := m["services"].([]any)
		for _, s := range svcs {
			s := s.(map[string]any)
			got = append(got, s["service_id"].(string)+"/"+s["client_id"].(string))
		}
		next, _ := m["next_cursor"].(string)
		if next == "" {
			return got
		}
		if len(svcs) != limit {
			t.Fatalf("page size %d: a page of %d with a next cursor", limit, len(svcs))
		}
		cursor = next
	}
}

func conformUsage(t *testing.T, path string, resp response, status int) {
	t.Helper()
	if resp.Status != status {
		t.Fatalf("GET %s: %d, want %d: %s", path, resp.Status, status, resp.Body)
	}
	router, err := gorillamux.NewRouter(loadSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("GET %s: not in spec: %v", path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(resp.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
		t.Errorf("GET %s (%d): %v", path, resp.Status, err)
	}
}

// GET /v1/services/{id}/usage/series: at most `points` points a step apart from the period's
// first bucket, averages and maxima of the buckets in each step, null where no bucket is;
// another client's service a 404, a bad metric or point count 422; conforming to openapi.yaml.
// R45: the series endpoint for graphs.
func TestUsageSeriesOverHTTP(t *testing.T) {
	h := newHarness(t, "sqlite")
	ctx := t.Context()
	seedUsageService(t, h, "s-1", "whmcs", "", 5001)
	seedUsageService(t, h, "s-other", "other", "", 5003)
	cur := usage.BucketStart(h.clock())
	from := cur.Add(-55 * time.Minute) // 12 buckets up to and including the current one
	b := func(start time.Time, swapSum, swapMax int64) models.UsageBucket {
		return models.UsageBucket{ClientID: "whmcs", ServiceID: "s-1", BucketStart: start.Unix(), Cluster: "default", Node: "pve1",
			UsageFigures: models.UsageFigures{Samples: 5, SwapSamples: 5, SwapSum: swapSum, SwapMax: i64p(swapMax),
				MemSum: 5000, MemMax: i64p(1000), NetIn: i64p(600)},
			LastSample: start.Unix()}
	}
	if err := h.db.UpsertUsageBuckets(ctx, []models.UsageBucket{
		b(from, 500, 300), b(from.Add(5*time.Minute), 1500, 700), b(cur, 50, 10),
	}); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"metric": {"swap"}, "from": {from.Format(time.RFC3339)}, "to": {cur.Add(5 * time.Minute).Format(time.RFC3339)},
		"points": {"6"}}
	path := "/v1/services/s-1/usage/series?" + q.Encode()
	r := h.billing("GET", path, nil)
	conformUsage(t, path, r, 200)
	s := r.json(t)["series"].(map[string]any)
	pts := s["points"].([]any)
	if s["step_seconds"] != 600.0 || s["unit"] != "bytes" || len(pts) != 6 {
		t.Fatalf("series: %s", r.Body)
	}
	p0, p1, p5 := pts[0].(map[string]any), pts[1].(map[string]any), pts[5].(map[string]any)
	if p0["t"] != from.UTC().Format(time.RFC3339) || p0["avg"] != 200.0 || p0["max"] != 700.0 {
		t.Fatalf("first point: %v", p0)
	}
	if p1["avg"] != nil || p1["max"] != nil || p5["avg"] != 10.0 {
		t.Fatalf("points 2 and 6: %v %v", p1, p5)
	}
	q.Set("metric", "netin")
	if r := h.billing("GET", "/v1/services/s-1/usage/series?"+q.Encode(), nil); r.Status != 200 ||
		r.json(t)["series"].(map[string]any)["points"].([]any)[0].(map[string]any)["avg"] != 2.0 {
		t.Fatalf("netin: %d %s", r.Status, r.Body)
	}
	checkProblem(t, h.billing("GET", "/v1/services/s-other/usage/series?"+q.Encode(), nil), 404, "not_found")
	for _, bad := range []url.Values{{"metric": {"load"}}, {"points": {"5000"}}, {"step": {"1"}}} {
		v := url.Values{"metric": {"swap"}, "from": q["from"], "to": q["to"]}
		for k, x := range bad {
			v[k] = x
		}
		checkProblem(t, h.billing("GET", "/v1/services/s-1/usage/series?"+v.Encode(), nil), 422, "validation_failed")
	}
}
