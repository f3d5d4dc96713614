package usage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"pvebill/models"
	"pvebill/modules/usage"
)

var guestNames = []string{"pvebill_guest_swap_bytes", "pvebill_guest_swap_limit_bytes",
	"pvebill_guest_swap_5m_avg_bytes", "pvebill_guest_swap_5m_max_bytes"}

// A value that is not known is an absent series, never 0; a guest that moves loses its old
// series; RetainNode drops the guests it was not told to keep.
// R33 (and R14): per-guest swap series in base units, absent rather than zero, removed when the guest goes away.
func TestGuestMetricsAbsentNotZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := usage.NewGuestMetrics(reg)
	l := usage.GuestLabels{Cluster: "c1", Node: "pve1", VMID: 5001, ServiceID: "svc-1", GuestType: "container", ClientID: "whmcs"}
	m.Set(l, nil, i64(1<<30), nil)
	if n := testutil.CollectAndCount(reg, guestNames...); n != 1 {
		t.Fatalf("%d series with only a limit known, want 1", n)
	}
	m.Set(l, i64(100), i64(1<<30), &usage.Window{Avg: 80, Max: 100, Samples: 3})
	if n := testutil.CollectAndCount(reg, guestNames...); n != 4 {
		t.Fatalf("%d series, want 4", n)
	}
	moved := l
	moved.Node = "pve2"
	m.Set(moved, i64(120), nil, &usage.Window{Avg: 90, Max: 120, Samples: 4})
	exp := `
# HELP pvebill_guest_swap_bytes Swap used by the guest at its latest sample.
# TYPE pvebill_guest_swap_bytes gauge
pvebill_guest_swap_bytes{client_id="whmcs",cluster="c1",guest_type="container",node="pve2",service_id="svc-1",vmid="5001"} 120
# HELP pvebill_guest_swap_5m_max_bytes Maximum swap used over the last five minutes of samples.
# TYPE pvebill_guest_swap_5m_max_bytes gauge
pvebill_guest_swap_5m_max_bytes{client_id="whmcs",cluster="c1",guest_type="container",node="pve2",service_id="svc-1",vmid="5001"} 120
# HELP pvebill_guest_swap_5m_avg_bytes Average swap used over the last five minutes of samples.
# TYPE pvebill_guest_swap_5m_avg_bytes gauge
pvebill_guest_swap_5m_avg_bytes{client_id="whmcs",cluster="c1",guest_type="container",node="pve2",service_id="svc-1",vmid="5001"} 90
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), guestNames...); err != nil {
		t.Fatal(err)
	}
	if gone := m.RetainNode("c1", "pve2", map[models.ServiceKey]bool{{ClientID: "whmcs", ServiceID: "svc-other"}: true}); len(gone) != 1 || m.Len() != 0 {
		t.Fatalf("retain removed %v, %d left", gone, m.Len())
	}
	if n := testutil.CollectAndCount(reg, guestNames...); n != 0 {
		t.Fatalf("%d series left", n)
	}
}

type stateCount struct {
	n      int64
	err    error
	open   int64
	oldest time.Time
}

func (s stateCount) CountServicesInState(context.Context, string) (int64, error) { return s.n, s.err }

func (s stateCount) OpenReconciliationStats(context.Context) (int64, time.Time, error) {
	return s.open, s.oldest, s.err
}

// The needs-reconciliation gauge is read at scrape time; when the database fails it is absent.
func TestReconciliationGauge(t *testing.T) {
	reg := prometheus.NewRegistry()
	usage.NewReconciliationGauge(reg, stateCount{n: 2, open: 3, oldest: time.Now().Add(-2 * time.Hour)})
	exp := "# HELP pvebill_services_needs_reconciliation Services in needs_reconciliation: an operator must resolve them through the admin API.\n" +
		"# TYPE pvebill_services_needs_reconciliation gauge\npvebill_services_needs_reconciliation 2\n" +
		"# HELP pvebill_reconciliations_open Operations in needs_reconciliation whose service still waits for an operator (GET /v1/admin/reconciliations).\n" +
		"# TYPE pvebill_reconciliations_open gauge\npvebill_reconciliations_open 3\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "pvebill_services_needs_reconciliation", "pvebill_reconciliations_open"); err != nil {
		t.Fatal(err)
	}
	// R58: the age of the oldest open reconciliation, for the alert on those older than an hour.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "pvebill_reconciliations_open_oldest_seconds" {
			if age := mf.GetMetric()[0].GetGauge().GetValue(); age < 7199 || age > 7300 {
				t.Fatalf("oldest age %v", age)
			}
		}
	}
	reg = prometheus.NewRegistry()
	usage.NewReconciliationGauge(reg, stateCount{err: errors.New("down")})
	if n := testutil.CollectAndCount(reg, "pvebill_services_needs_reconciliation"); n != 0 {
		t.Fatalf("%d series while the database is down, want none", n)
	}
}

// R33: the per-guest series are emitted in the order the registry sorts them into (label
// values, labels by name), family by family, so the registry's sort of a scrape runs over
// sorted input and a scrape's cost grows linearly with the guests. Guests added, moved and
// removed between scrapes keep the order.
func TestGuestMetricsEmittedInRegistryOrder(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := usage.NewGuestMetrics(reg)
	set := func(i int, node string) {
		m.Set(usage.GuestLabels{Cluster: "c1", Node: node, VMID: 100 + i*37%1000, ServiceID: fmt.Sprintf("svc-%d", i*7919%1000),
			GuestType: []string{"container", "vm"}[i%2], ClientID: []string{"alice", "bob", "carol"}[i%3]}, i64(int64(i)), i64(1<<30), &usage.Window{Avg: 1, Max: 2})
	}
	check := func(when string) {
		t.Helper()
		ch := make(chan prometheus.Metric, 8192)
		m.Collect(ch)
		close(ch)
		var prev *dto.Metric
		prevDesc := ""
		for x := range ch {
			var d dto.Metric
			if err := x.Write(&d); err != nil {
				t.Fatal(err)
			}
			if desc := x.Desc().String(); desc != prevDesc {
				prev, prevDesc = nil, desc
			}
			if prev != nil && slices.CompareFunc(prev.Label, d.Label, func(a, b *dto.LabelPair) int {
				return strings.Compare(a.GetValue(), b.GetValue())
			}) >= 0 {
				t.Fatalf("%s: %v emitted after %v", when, d.Label, prev.Label)
			}
			prev = &d
		}
	}
	for i := range 500 {
		set(i, fmt.Sprintf("pve%d", i%7))
	}
	check("first scrape")
	for i := range 50 {
		set(i*3, "pve9") // moved
	}
	m.RetainNode("c1", "pve3", nil)
	for i := 500; i < 600; i++ {
		set(i, "pve1")
	}
	check("after moves, removals and additions")
	if n := testutil.CollectAndCount(reg, guestNames...); n != 4*m.Len() {
		t.Fatalf("%d series for %d guests", n, m.Len())
	}
}
