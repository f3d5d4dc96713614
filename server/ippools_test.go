package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"pvebill/models"
	"pvebill/modules/ippool"
)

// ipPoolJSON is the docs/api.md example pool with another range; name "" leaves the name out (the
// path's is taken).
func ipPoolJSON(name, first, last string) string {
	m := map[string]any{"cluster": "default", "bridge": "vmbr0", "cidr": "203.0.113.0/24",
		"gateway": "203.0.113.1", "first": first, "last": last, "nameservers": []string{"203.0.113.53"}}
	if name != "" {
		m["name"] = name
	}
	raw, _ := json.Marshal(m)
	return string(raw)
}

func poolOf(t *testing.T, r response) map[string]any {
	t.Helper()
	p, ok := r.json(t)["ip_pool"].(map[string]any)
	if !ok {
		t.Fatalf("no ip_pool envelope: %s", r.Body)
	}
	return p
}

func listPools(t *testing.T, h *harness) []any {
	t.Helper()
	r := h.admin("GET", "/v1/admin/ip-pools", nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	list, ok := r.json(t)["ip_pools"].([]any)
	if !ok {
		t.Fatalf("ip_pools is not a list: %s", r.Body)
	}
	return list
}

func TestIPPoolAdminRoundTrip(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		if got := listPools(t, h); len(got) != 0 {
			t.Fatalf("fresh database lists %v", got)
		}
		r := h.admin("PUT", "/v1/admin/ip-pools/pool-a", []byte(ipPoolJSON("pool-a", "203.0.113.10", "203.0.113.200")))
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		p := poolOf(t, r)
		want := map[string]any{"name": "pool-a", "cluster": "default", "bridge": "vmbr0", "cidr": "203.0.113.0/24",
			"gateway": "203.0.113.1", "first": "203.0.113.10", "last": "203.0.113.200", "size": 191.0, "used": 0.0,
			"free": 191.0, "source": "api"}
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s = %v, want %v", k, p[k], v)
			}
		}
		if fmt.Sprint(p["nameservers"]) != "[203.0.113.53]" {
			t.Errorf("nameservers %v", p["nameservers"])
		}
		// Replacing: 200, the path's name taken when the body has none.
		body := strings.Replace(ipPoolJSON("", "203.0.113.10", "203.0.113.200"), `["203.0.113.53"]`, `[]`, 1)
		r = h.admin("PUT", "/v1/admin/ip-pools/pool-a", []byte(body))
		if r.Status != 200 || fmt.Sprint(poolOf(t, r)["nameservers"]) != "[]" {
			t.Fatalf("replace: %d %s", r.Status, r.Body)
		}

		// Two services take addresses; the list shows them as used.
		svc := ippool.NewService(h.db)
		for _, id := range []string{"whmcs-1", "whmcs-2"} {
			if _, err := svc.Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "whmcs", ServiceID: id}); err != nil {
				t.Fatal(err)
			}
		}
		list := listPools(t, h)
		if len(list) != 1 {
			t.Fatalf("list %v", list)
		}
		if e := list[0].(map[string]any); e["used"] != 2.0 || e["free"] != 189.0 || e["name"] != "pool-a" {
			t.Fatalf("usage in list: %v", e)
		}

		// Shrinking below the allocated addresses is refused, translated, and changes nothing.
		r = h.admin("PUT", "/v1/admin/ip-pools/pool-a", []byte(ipPoolJSON("", "203.0.113.11", "203.0.113.200")),
			withHeader("Accept-Language", "de"))
		m := checkProblem(t, r, 409, "ip_pool_in_use")
		if m["permanence"] != "temporary" || r.Header.Get("Content-Language") != "de" ||
			!strings.Contains(m["detail"].(string), "pool-a") || !strings.Contains(m["detail"].(string), "Diensten") {
			t.Fatalf("shrink refusal: %s", r.Body)
		}
		if e := listPools(t, h)[0].(map[string]any); e["first"] != "203.0.113.10" {
			t.Fatalf("refused shrink was written: %v", e)
		}

		// Deleting while addresses are allocated is refused; after release it goes through.
		checkProblem(t, h.admin("DELETE", "/v1/admin/ip-pools/pool-a", nil), 409, "ip_pool_in_use")
		for _, id := range []string{"whmcs-1", "whmcs-2"} {
			if err := svc.Release(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: id}); err != nil {
				t.Fatal(err)
			}
		}
		r = h.admin("DELETE", "/v1/admin/ip-pools/pool-a", nil)
		if r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("delete: %d %q", r.Status, r.Body)
		}
		if got := listPools(t, h); len(got) != 0 {
			t.Fatalf("after delete: %v", got)
		}
		checkProblem(t, h.admin("DELETE", "/v1/admin/ip-pools/pool-a", nil), 404, "ip_pool_not_found")
	})
}

func TestIPPoolRoutesNeedAdmin(t *testing.T) {
	h := newHarness(t, "sqlite")
	body := []byte(ipPoolJSON("", "203.0.113.10", "203.0.113.200"))
	for _, who := range []struct{ id, secret string }{{"whmcs", billingSecret}, {"shop", shopSecret}} {
		checkProblem(t, h.signed("PUT", "/v1/admin/ip-pools/pool-a", who.id, who.secret, body), 403, "forbidden")
		checkProblem(t, h.signed("GET", "/v1/admin/ip-pools", who.id, who.secret, nil), 403, "forbidden")
		checkProblem(t, h.signed("DELETE", "/v1/admin/ip-pools/pool-a", who.id, who.secret, nil), 403, "forbidden")
	}
	checkProblem(t, h.signed("GET", "/v1/admin/ip-pools", "ops", "not-the-secret", nil), 401, "signature_invalid")
	if got := listPools(t, h); len(got) != 0 {
		t.Fatalf("a refused request stored %v", got)
	}
}

// Bad pools are 422 validation_failed naming each field, with translated messages; nothing is
// stored.
func TestIPPoolValidationProblems(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		edit := func(k string, v any) string {
			m := map[string]any{}
			_ = json.Unmarshal([]byte(ipPoolJSON("", "203.0.113.10", "203.0.113.200")), &m)
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			raw, _ := json.Marshal(m)
			return string(raw)
		}
		type fe struct{ field, code string }
		cases := []struct {
			path, body string
			want       []fe
		}{
			{"pool-a", edit("netmask", "255.255.255.0"), []fe{{"netmask", "unknown_field"}}},
			{"pool-a", edit("name", "pool-b"), []fe{{"name", "not_allowed_value"}}},
			{"Pool-A", edit("name", nil), []fe{{"name", "bad_format"}}},
			// A v6 cidr makes an IPv6 pool (R54): the IPv4 range and gateway do not fit it.
			{"pool-a", edit("cidr", "2001:db8::/64"), []fe{{"first", "not_for_family"}, {"gateway", "bad_format"}, {"last", "not_for_family"}}},
			{"pool-a", edit("cidr", "203.0.113.7/24"), []fe{{"cidr", "not_canonical"}}},
			{"pool-a", edit("cidr", nil), []fe{{"cidr", "required"}}},
			{"pool-a", edit("gateway", "203.0.113.50"), []fe{{"gateway", "inside_range"}}},
			{"pool-a", edit("gateway", "192.0.2.1"), []fe{{"gateway", "outside_network"}}},
			{"pool-a", edit("first", "203.0.113.0"), []fe{{"first", "reserved_address"}}},
			{"pool-a", edit("last", "203.0.113.9"), []fe{{"last", "too_small"}}},
			{"pool-a", edit("nameservers", "203.0.113.53"), []fe{{"nameservers", "wrong_type"}}},
			{"pool-a", edit("nameservers", []string{"1.1.1.1", "1.1.1.1"}), []fe{{"nameservers[1]", "duplicate"}}},
			{"pool-a", edit("first", 10), []fe{{"first", "wrong_type"}}},
			{"pool-a", `{"cluster":"default"}`, []fe{{"bridge", "required"}, {"cidr", "required"}, {"first", "required"},
				{"gateway", "required"}, {"last", "required"}}},
		}
		for i, c := range cases {
			t.Run(fmt.Sprintf("%02d_%s", i, c.want[0].field), func(t *testing.T) {
				r := h.admin("PUT", "/v1/admin/ip-pools/"+c.path, []byte(c.body), withHeader("Accept-Language", "fr"))
				m := checkProblem(t, r, 422, "validation_failed")
				errs, _ := m["errors"].([]any)
				if len(errs) != len(c.want) {
					t.Fatalf("errors %v, want %v", errs, c.want)
				}
				for j, w := range c.want {
					e := errs[j].(map[string]any)
					msg, _ := e["message"].(string)
					if e["field"] != w.field || e["code"] != w.code || !strings.Contains(msg, w.field) {
						t.Errorf("error %d = %v, want %v", j, e, w)
					}
				}
			})
		}
		checkProblem(t, h.admin("PUT", "/v1/admin/ip-pools/pool-a", []byte("{")), 400, "malformed_json")
		checkProblem(t, h.admin("PUT", "/v1/admin/ip-pools/pool-a", nil), 400, "malformed_json")
		if got := listPools(t, h); len(got) != 0 {
			t.Fatalf("refused pools were stored: %v", got)
		}
	})
}

// The allocation errors are typed problems: wrapped as the Go API returns them, the server's one
// error mapper answers them as 409 ip_pool_exhausted (temporary) and 404 ip_pool_not_found.
func TestIPPoolAllocationErrorsAnswerAsProblems(t *testing.T) {
	h := newHarness(t, "sqlite")
	svc := ippool.NewService(h.db)
	h.srv.V1("admin").POST("/_test/allocate/:pool/:service", func(c *gin.Context) {
		a, err := svc.Allocate(c.Request.Context(), c.Param("pool"), models.ServiceKey{ClientID: "whmcs", ServiceID: c.Param("service")})
		if err != nil {
			h.srv.WriteError(c, err)
			return
		}
		c.JSON(200, gin.H{"cidr": a.CIDR()})
	})
	if r := h.admin("PUT", "/v1/admin/ip-pools/tiny", []byte(ipPoolJSON("", "203.0.113.10", "203.0.113.10"))); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	r := h.admin("POST", "/v1/_test/allocate/tiny/svc-1", []byte("{}"))
	if r.Status != 200 || r.json(t)["cidr"] != "203.0.113.10/24" {
		t.Fatalf("allocate: %d %s", r.Status, r.Body)
	}
	m := checkProblem(t, h.admin("POST", "/v1/_test/allocate/tiny/svc-2", []byte("{}"), withHeader("Accept-Language", "tr")), 409, "ip_pool_exhausted")
	if m["permanence"] != "temporary" {
		t.Fatalf("exhausted: %v", m)
	}
	checkProblem(t, h.admin("POST", "/v1/_test/allocate/nope/svc-1", []byte("{}")), 404, "ip_pool_not_found")
	// The list shows the pool full.
	if e := listPools(t, h)[0].(map[string]any); e["used"] != 1.0 || e["free"] != 0.0 {
		t.Fatalf("usage %v", e)
	}
}
