package server_test

import (
	"strings"
	"testing"

	"pvebill/models/dbtest"
)

// listPage reads one page of GET /v1/services as client id, checking it against openapi.yaml.
func (h *svcHarness) listPage(id, secret, query string) ([]string, any) {
	h.t.Helper()
	path := "/v1/services" + query
	r := h.signed("GET", path, id, secret, nil)
	if r.Status != 200 {
		h.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	conform(h.t, "GET", path, r)
	body := r.json(h.t)
	var ids []string
	for _, s := range body["services"].([]any) {
		svc := s.(map[string]any)
		mon := svc["monitoring"].(map[string]any)
		for k, v := range mon {
			if v != nil {
				h.t.Fatalf("service %v: monitoring %s = %v in a list", svc["service_id"], k, v)
			}
		}
		ids = append(ids, svc["service_id"].(string)+"="+svc["state"].(string)+"/"+svc["power"].(string))
	}
	return ids, body["next_cursor"]
}

// R46: GET /v1/services pages the calling client's own services by service id, over more than
// one page, from the database alone: no request reaches Proxmox however many pages are read;
// another client's service of the same id is never listed; a limit above 1000 is 422.
func TestListServicesPagesOwnServices(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			for _, id := range []string{"list-c", "list-a", "list-b"} {
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
			}
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("list-v", "vm-2g")))
			succeeded(t, h.billing("POST", "/v1/services/list-b/terminate?wait=20", nil))
			succeeded(t, h.otherClient("POST", "/v1/services?wait=20", createBody("list-a", "ct-1g")))
			succeeded(t, h.otherClient("POST", "/v1/services?wait=20", createBody("list-o", "ct-1g")))

			before := len(h.sim.Requests())
			p1, cur := h.listPage("whmcs", billingSecret, "?limit=2")
			if strings.Join(p1, " ") != "list-a=active/unknown list-b=terminated/stopped" || cur != "list-b" {
				t.Fatalf("first page %v, next_cursor %v", p1, cur)
			}
			p2, cur := h.listPage("whmcs", billingSecret, "?limit=2&cursor=list-b")
			if strings.Join(p2, " ") != "list-c=active/unknown list-v=active/unknown" || cur != nil {
				t.Fatalf("second page %v, next_cursor %v", p2, cur)
			}
			p3, cur := h.listPage("whmcs", billingSecret, "?limit=2&cursor=list-v")
			if len(p3) != 0 || cur != nil {
				t.Fatalf("third page %v, next_cursor %v", p3, cur)
			}
			all, cur := h.listPage("whmcs", billingSecret, "")
			if len(all) != 4 || cur != nil {
				t.Fatalf("default page %v, next_cursor %v", all, cur)
			}
			other, _ := h.listPage("other", otherSecret, "")
			if strings.Join(other, " ") != "list-a=active/unknown list-o=active/unknown" {
				t.Fatalf("other client's list %v", other)
			}
			if n := len(h.sim.Requests()) - before; n != 0 {
				t.Fatalf("listing sent %d requests to Proxmox, want 0", n)
			}
			p4 := h.billing("GET", "/v1/services?cursor=list-c", nil)
			svc := p4.json(t)["services"].([]any)[0].(map[string]any)
			if ips := svc["ip_addresses"].([]any); svc["service_id"] != "list-v" || len(ips) != 1 || ips[0] != "203.0.113.10" {
				t.Fatalf("VM in the list %v", svc)
			}

			checkProblem(t, h.billing("GET", "/v1/services?limit=1001", nil), 422, "validation_failed")
			checkProblem(t, h.billing("GET", "/v1/services?limit=0", nil), 422, "validation_failed")
			checkProblem(t, h.billing("GET", "/v1/services?page=2", nil), 422, "validation_failed")
			checkProblem(t, h.billing("GET", "/v1/services?cursor=a%2Fb", nil), 422, "validation_failed")
			checkProblem(t, h.billing("GET", "/v1/services?client=other", nil), 404, "not_found")
			if adm, _ := h.listPage("ops", adminSecret, "?client=other"); len(adm) != 2 {
				t.Fatalf("admin's list of other %v", adm)
			}
		})
	}
}
