package server_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/rdns"
	"pvebill/modules/rdns/pdnstest"
	"pvebill/modules/stack"
)

// The reverse zones of the test pools: pool-a is 203.0.113.0/24, pool-6 2001:db8::/48.
const (
	zone4 = "113.0.203.in-addr.arpa."
	zone6 = "8.b.d.0.1.0.0.2.ip6.arpa."
)

// rdnsHarness is a replica whose reverse DNS goes to a real PowerDNS through a gate the test
// opens and closes, with pool-a and pool-6 naming their reverse zones (both zones exist in
// PowerDNS unless missing6).
func rdnsHarness(t *testing.T, dialect string, missing6 bool) (*svcHarness, *pdnstest.Server, *pdnstest.Gate) {
	t.Helper()
	pdns := pdnstest.Start(t)
	pdns.CreateZone(t, zone4)
	if !missing6 {
		pdns.CreateZone(t, zone6)
	}
	gate := pdns.Gate(t)
	client := &rdns.PowerDNS{URL: gate.URL, APIKey: pdns.APIKey, ServerID: "localhost"}
	h := newServicesReplica(t, dbtest.Open(t, dialect), simtest.Start(t, nil), nil, "test-"+dialect, true,
		func(o *stack.Options) { o.PowerDNS = client })
	ipv6Plans(t, h)
	for name, body := range map[string]string{
		"pool-a": `{"cluster":"default","bridge":"vmbr0","cidr":"203.0.113.0/24","gateway":"203.0.113.1","first":"203.0.113.10","last":"203.0.113.20","nameservers":["203.0.113.53"],"reverse_zone":"` + zone4 + `"}`,
		"pool-6": `{"cluster":"default","bridge":"vmbr0","cidr":"2001:db8::/48","gateway":"fe80::1","nameservers":["2001:db8::53"],"reverse_zone":"` + zone6 + `"}`,
	} {
		r := h.signed("PUT", "/v1/admin/ip-pools/"+name, "ops", adminSecret, []byte(body))
		if r.Status != 200 || r.json(t)["ip_pool"].(map[string]any)["reverse_zone"] == nil {
			t.Fatalf("pool %s: %d %s", name, r.Status, r.Body)
		}
	}
	return h, pdns, gate
}

func rdnsBody(addr, host string) []byte {
	b, _ := json.Marshal(map[string]string{"address": addr, "hostname": host})
	return b
}

// rdnsList is the answer's records by address.
func rdnsList(t *testing.T, r response) map[string]map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("rdns: %d %s", r.Status, r.Body)
	}
	out := map[string]map[string]any{}
	for _, x := range r.json(t)["rdns"].([]any) {
		m := x.(map[string]any)
		out[m["address"].(string)] = m
	}
	return out
}

// resolvesTo checks the PTR of addr through a DNS query to PowerDNS ("" = no record).
func resolvesTo(t *testing.T, pdns *pdnstest.Server, addr, want string) {
	t.Helper()
	names, err := pdns.Resolver().LookupAddr(t.Context(), addr)
	if want == "" {
		if err == nil && len(names) > 0 {
			t.Fatalf("PTR of %s: %v, want none", addr, names)
		}
		return
	}
	if err != nil || !slices.Equal(names, []string{want}) {
		t.Fatalf("PTR of %s: %v %v, want %s", addr, names, err, want)
	}
}

func rdnsRows(t *testing.T, h *svcHarness) []models.RDNSRecord {
	t.Helper()
	var rows []models.RDNSRecord
	dbtest.Scan(t, h.db, &rows, "SELECT * FROM rdns_records ORDER BY address")
	return rows
}

// R55 over HTTP on both databases against a real PowerDNS: a VM with an IPv4 address and an
// IPv6 /64 sets the PTR of its v4 address and of an address inside its prefix; both read back
// through PowerDNS's API and a DNS query, and GET lists them synced. An address the service does
// not hold (another v4 address, the next /64) is 422 address_not_assigned with nothing written;
// bad hostnames are 422 on the field; another client's service is 404; a reinstall leaves the
// records alone. Terminate removes both
// records from PowerDNS and the table, and the next owner of the address sets its own name.
func TestRDNSOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h, pdns, _ := rdnsHarness(t, dialect, false)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-1", "vm-v6")))
			got := rdnsList(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody("203.0.113.10", "mail.example.com")))
			if r := got["203.0.113.10"]; r == nil || r["hostname"] != "mail.example.com" || r["status"] != "synced" || r["last_error"] != nil {
				t.Fatalf("v4 record %v", got)
			}
			got = rdnsList(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody("2001:db8::25", "v6.example.com")))
			if len(got) != 2 || got["2001:db8::25"]["status"] != "synced" {
				t.Fatalf("records %v", got)
			}
			resolvesTo(t, pdns, "203.0.113.10", "mail.example.com.")
			resolvesTo(t, pdns, "2001:db8::25", "v6.example.com.")
			if p := pdns.PTR(t, zone4, rdns.ReverseName(netip.MustParseAddr("203.0.113.10"))); p != "mail.example.com." {
				t.Fatalf("API PTR %q", p)
			}
			list := h.billing("GET", "/v1/services/rdns-1/rdns", nil)
			if body := string(list.Body); !strings.Contains(body, `{"address":"203.0.113.10","hostname":"mail.example.com","status":"synced"`) ||
				strings.Index(body, "203.0.113.10") > strings.Index(body, "2001:db8::25") {
				t.Fatalf("GET %s", body)
			}

			for _, foreign := range []string{"203.0.113.11", "2001:db8:0:1::1", "198.51.100.7"} {
				m := checkProblem(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody(foreign, "evil.example.com")), 422, "address_not_assigned")
				if !strings.Contains(m["detail"].(string), foreign) || m["permanence"] != "permanent" {
					t.Fatalf("refusal %v", m)
				}
				resolvesTo(t, pdns, foreign, "")
			}
			if rows := rdnsRows(t, h); len(rows) != 2 {
				t.Fatalf("rows after refusals: %+v", rows)
			}
			for host, code := range map[string]string{"": "required", "-bad.example.com": "bad_format", "localhost": "bad_format",
				"mail.example.com.": "not_canonical", "a.123": "bad_format", strings.Repeat("a.", 127) + "com": "too_long",
				"under_score.example.com": "bad_format"} {
				m := checkProblem(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody("203.0.113.10", host)), 422, "validation_failed")
				if f := m["errors"].([]any)[0].(map[string]any); f["field"] != "hostname" || f["code"] != code {
					t.Fatalf("hostname %q: %v", host, m)
				}
			}
			m := checkProblem(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody("2001:DB8::25", "x.example.com")), 422, "validation_failed")
			if f := m["errors"].([]any)[0].(map[string]any); f["field"] != "address" || f["code"] != "not_canonical" {
				t.Fatalf("address: %v", m)
			}
			checkProblem(t, h.otherClient("GET", "/v1/services/rdns-1/rdns", nil), 404, "not_found")
			if got := rdnsList(t, h.admin("GET", "/v1/services/rdns-1/rdns?client=whmcs")); len(got) != 2 {
				t.Fatalf("the admin's view %v", got)
			}
			checkProblem(t, h.otherClient("PUT", "/v1/services/rdns-1/rdns", rdnsBody("203.0.113.10", "x.example.com")), 404, "not_found")
			resolvesTo(t, pdns, "203.0.113.10", "mail.example.com.")

			// A reinstall (a new guest, its hostname written again) leaves the PTR records alone.
			before := rdnsRows(t, h)
			reinstallOverHTTP(t, h, "rdns-1")
			if after := rdnsRows(t, h); len(after) != 2 || after[0].Generation != before[0].Generation ||
				after[1].Generation != before[1].Generation || after[1].Hostname != "mail.example.com" {
				t.Fatalf("records after a reinstall %+v, before %+v", after, before)
			}
			resolvesTo(t, pdns, "203.0.113.10", "mail.example.com.")

			succeeded(t, h.billing("POST", "/v1/services/rdns-1/terminate?wait=20", []byte(`{}`)))
			resolvesTo(t, pdns, "203.0.113.10", "")
			resolvesTo(t, pdns, "2001:db8::25", "")
			if rows := rdnsRows(t, h); len(rows) != 0 {
				t.Fatalf("rows after terminate: %+v", rows)
			}
			if got := rdnsList(t, h.billing("GET", "/v1/services/rdns-1/rdns", nil)); len(got) != 0 {
				t.Fatalf("terminated service lists %v", got)
			}
			checkProblem(t, h.billing("PUT", "/v1/services/rdns-1/rdns", rdnsBody("203.0.113.10", "x.example.com")), 422, "address_not_assigned")

			// The address is free for the next owner.
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-2", "vm-v6")))
			got = rdnsList(t, h.billing("PUT", "/v1/services/rdns-2/rdns", rdnsBody("203.0.113.10", "next.example.com")))
			if got["203.0.113.10"]["status"] != "synced" {
				t.Fatalf("next owner %v", got)
			}
			resolvesTo(t, pdns, "203.0.113.10", "next.example.com.")
		})
	}
}

// rdnsAttempts reads pvebill_rdns_attempts_total{action,result} (0 when absent).
func rdnsAttempts(t *testing.T, reg *prometheus.Registry, action, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_rdns_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["action"] == action && l["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// R55, a PowerDNS outage on both databases: while PowerDNS's API drops every connection, a PUT
// still answers 200 with the record pending (one attempt, its cause, never the API key), and a
// terminate succeeds and leaves its PTR removal pending; nothing is retried before its backoff.
// Once PowerDNS is back, the sync job of another replica, run past the backoff, writes the
// pending name, removes the terminated service's PTR (and its row), and records the v6 name,
// whose zone does not exist in PowerDNS, as failed. The metrics follow each step; the key is in
// no log line, row or answer.
func TestRDNSOutageIsRetriedByTheJob(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h, pdns, gate := rdnsHarness(t, dialect, true)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-keep", "vm-v6")))
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-gone", "vm-v6")))
			if got := rdnsList(t, h.billing("PUT", "/v1/services/rdns-gone/rdns", rdnsBody("203.0.113.11", "gone.example.com"))); got["203.0.113.11"]["status"] != "synced" {
				t.Fatalf("before the outage %v", got)
			}

			gate.Close()
			var answers []string
			for _, req := range [][2]string{{"203.0.113.10", "mail.example.com"}, {"2001:db8::1", "v6.example.com"}} {
				r := h.billing("PUT", "/v1/services/rdns-keep/rdns", rdnsBody(req[0], req[1]))
				answers = append(answers, string(r.Body))
				rec := rdnsList(t, r)[req[0]]
				if rec["status"] != "pending" || rec["attempts"] != float64(1) || rec["last_error"] == nil || rec["hostname"] != req[1] {
					t.Fatalf("during the outage %v", rec)
				}
			}
			succeeded(t, h.billing("POST", "/v1/services/rdns-gone/terminate?wait=20", []byte(`{}`)))
			resolvesTo(t, pdns, "203.0.113.11", "gone.example.com.")
			if n := metricValue(t, h.reg, "pvebill_rdns_records", "status", "pending"); n != 3 {
				t.Fatalf("pending records %v", n)
			}
			if a := rdnsAttempts(t, h.reg, "set", "pending") + rdnsAttempts(t, h.reg, "delete", "pending"); a != 3 {
				t.Fatalf("attempts not reached %v", a)
			}
			if age := gaugeValue(t, h.reg, "pvebill_rdns_oldest_unsynced_seconds"); age < 0 || age > 60 {
				t.Fatalf("oldest unsynced %v s", age)
			}

			gate.Open()
			client := &rdns.PowerDNS{URL: gate.URL, APIKey: pdns.APIKey, ServerID: "localhost"}
			ctx := t.Context()
			now := rdns.NewService(rdns.Options{DB: h.db, PowerDNS: client})
			if err := (jobs.RDNSSync{Syncer: now}).Run(ctx); err != nil {
				t.Fatal(err)
			}
			if n := metricValue(t, h.reg, "pvebill_rdns_records", "status", "pending"); n != 3 {
				t.Fatalf("retried before the backoff: %v pending", n)
			}
			later := rdns.NewService(rdns.Options{DB: h.db, PowerDNS: client, Now: func() time.Time { return time.Now().Add(2 * time.Minute) }})
			if err := (jobs.RDNSSync{Syncer: later}).Run(ctx); err != nil {
				t.Fatal(err)
			}
			resolvesTo(t, pdns, "203.0.113.10", "mail.example.com.")
			resolvesTo(t, pdns, "203.0.113.11", "")
			got := rdnsList(t, h.billing("GET", "/v1/services/rdns-keep/rdns", nil))
			if got["203.0.113.10"]["status"] != "synced" || got["203.0.113.10"]["last_error"] != nil || got["203.0.113.10"]["synced_at"] == nil {
				t.Fatalf("v4 after the outage %v", got)
			}
			v6 := got["2001:db8::1"]
			if v6["status"] != "failed" || v6["attempts"] != float64(2) || !strings.Contains(v6["last_error"].(string), zone6) {
				t.Fatalf("v6 without its zone %v", v6)
			}
			rows := rdnsRows(t, h)
			if len(rows) != 2 || rows[0].Address != "2001:db8::1" || rows[1].Address != "203.0.113.10" {
				t.Fatalf("rows %+v", rows)
			}
			for st, want := range map[string]float64{"pending": 0, "synced": 1, "failed": 1} {
				if n := metricValue(t, h.reg, "pvebill_rdns_records", "status", st); n != want {
					t.Fatalf("%s records %v, want %v", st, n, want)
				}
			}
			for _, where := range append(answers, h.logs.String(), rows[0].LastError, rows[1].LastError) {
				if strings.Contains(where, pdns.APIKey) {
					t.Fatalf("the API key leaked: %s", where)
				}
			}
		})
	}
}

// R55, a change of plan that drops the IPv6 pool: the prefix is released and its PTR record
// becomes a pending removal in the same transaction, which the job removes from PowerDNS; the
// IPv4 address is kept and so is its record.
func TestRDNSChangePlanDropsThePrefixRecords(t *testing.T) {
	h, pdns, gate := rdnsHarness(t, "sqlite", false)
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-cp", "vm-v6")))
	rdnsList(t, h.billing("PUT", "/v1/services/rdns-cp/rdns", rdnsBody("203.0.113.10", "mail.example.com")))
	rdnsList(t, h.billing("PUT", "/v1/services/rdns-cp/rdns", rdnsBody("2001:db8::1", "v6.example.com")))
	resolvesTo(t, pdns, "2001:db8::1", "v6.example.com.")
	succeeded(t, h.billing("POST", "/v1/services/rdns-cp/change-plan?wait=20", []byte(`{"plan":"vm-4g"}`)))
	got := rdnsList(t, h.billing("GET", "/v1/services/rdns-cp/rdns", nil))
	if len(got) != 1 || got["203.0.113.10"]["status"] != "synced" {
		t.Fatalf("after the change of plan %v", got)
	}
	sync := rdns.NewService(rdns.Options{DB: h.db, PowerDNS: &rdns.PowerDNS{URL: gate.URL, APIKey: pdns.APIKey, ServerID: "localhost"}})
	if err := (jobs.RDNSSync{Syncer: sync}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	resolvesTo(t, pdns, "2001:db8::1", "")
	resolvesTo(t, pdns, "203.0.113.10", "mail.example.com.")
	if rows := rdnsRows(t, h); len(rows) != 1 || rows[0].Address != "203.0.113.10" {
		t.Fatalf("rows %+v", rows)
	}
}

// R55 under concurrency, on both databases and two replicas: PUTs for twenty addresses of a
// service's /64, spread over both replicas, race its terminate. Each PUT is 200 or 422
// address_not_assigned, never a 5xx; once the job ran, PowerDNS holds a PTR for none of them and
// the table is empty: no record outlives the address, whatever the order.
func TestRDNSRacesTerminate(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h, pdns, gate := rdnsHarness(t, dialect, false)
			client := &rdns.PowerDNS{URL: gate.URL, APIKey: pdns.APIKey, ServerID: "localhost"}
			h2 := newServicesReplica(t, h.db, h.sim, nil, "test2-"+dialect, false, func(o *stack.Options) { o.PowerDNS = client })
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-race", "vm-v6")))
			var wg sync.WaitGroup
			var term response
			statuses := make([]int, 20)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := []*svcHarness{h, h2}[i%2]
					statuses[i] = r.billing("PUT", "/v1/services/rdns-race/rdns", rdnsBody(fmt.Sprintf("2001:db8::%x", 0x100+i), fmt.Sprintf("h%d.example.com", i))).Status
				}()
				if i == 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						term = h2.billing("POST", "/v1/services/rdns-race/terminate?wait=20", []byte(`{}`))
					}()
				}
			}
			wg.Wait()
			succeeded(t, term)
			ok := 0
			for i, st := range statuses {
				switch st {
				case 200:
					ok++
				case 422:
				default:
					t.Fatalf("PUT %d: %d", i, st)
				}
			}
			sync := rdns.NewService(rdns.Options{DB: h.db, PowerDNS: client, Now: func() time.Time { return time.Now().Add(time.Hour) }})
			if err := (jobs.RDNSSync{Syncer: sync}).Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			if rows := rdnsRows(t, h); len(rows) != 0 {
				t.Fatalf("%d PUTs answered 200; rows left %+v", ok, rows)
			}
			for i := range statuses {
				resolvesTo(t, pdns, fmt.Sprintf("2001:db8::%x", 0x100+i), "")
			}
			t.Logf("%d of %d PUTs came before the terminate", ok, len(statuses))
		})
	}
}

// R55: a service has names for at most rdns.MaxRecords addresses (a /64 holds 2^64): one more
// address is 409 rdns_limit_reached with nothing written, in PowerDNS or the table; replacing a
// name it has is still allowed.
func TestRDNSLimitPerService(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h, pdns, _ := rdnsHarness(t, dialect, false)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("rdns-max", "vm-v6")))
			for i := 0; i < rdns.MaxRecords; i++ {
				r := h.billing("PUT", "/v1/services/rdns-max/rdns", rdnsBody(fmt.Sprintf("2001:db8::%x", 0x100+i), fmt.Sprintf("h%d.example.com", i)))
				if r.Status != 200 {
					t.Fatalf("PUT %d: %d %s", i, r.Status, r.Body)
				}
			}
			m := checkProblem(t, h.billing("PUT", "/v1/services/rdns-max/rdns", rdnsBody("203.0.113.10", "one-more.example.com")), 409, "rdns_limit_reached")
			if m["permanence"] != "permanent" || !strings.Contains(m["detail"].(string), "64") {
				t.Fatalf("refusal %v", m)
			}
			resolvesTo(t, pdns, "203.0.113.10", "")
			if rows := rdnsRows(t, h); len(rows) != rdns.MaxRecords {
				t.Fatalf("%d rows", len(rows))
			}
			got := rdnsList(t, h.billing("PUT", "/v1/services/rdns-max/rdns", rdnsBody("2001:db8::100", "renamed.example.com")))
			if len(got) != rdns.MaxRecords || got["2001:db8::100"]["hostname"] != "renamed.example.com" {
				t.Fatalf("a replacement at the limit: %d records, %v", len(got), got["2001:db8::100"])
			}
			resolvesTo(t, pdns, "2001:db8::100", "renamed.example.com.")
		})
	}
}
