package rdns_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"pvebill/modules/rdns"
	"pvebill/modules/rdns/pdnstest"
)

var ctx = context.Background()

func TestReverseName(t *testing.T) {
	if got := rdns.ReverseName(netip.MustParseAddr("203.0.113.10")); got != "10.113.0.203.in-addr.arpa." {
		t.Fatal(got)
	}
	want := "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.5.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."
	if got := rdns.ReverseName(netip.MustParseAddr("2001:db8:0:5::1")); got != want {
		t.Fatal(got)
	}
}

// R55 against a real PowerDNS: a PTR set through the API reads back through the API and
// answers a DNS query, for v4 and v6; a delete removes it; a wrong key is an error that does not
// carry the key.
func TestPowerDNSSetAndDeletePTR(t *testing.T) {
	s := pdnstest.Start(t)
	s.CreateZone(t, "113.0.203.in-addr.arpa")
	s.CreateZone(t, "8.b.d.0.1.0.0.2.ip6.arpa")
	c := &rdns.PowerDNS{URL: s.URL, APIKey: s.APIKey, ServerID: "localhost"}
	v4, v6 := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8:0:5::1")
	if err := c.SetPTR(ctx, "113.0.203.in-addr.arpa", v4, "mail.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPTR(ctx, "8.b.d.0.1.0.0.2.ip6.arpa.", v6, "v6.example.com."); err != nil {
		t.Fatal(err)
	}
	for a, want := range map[netip.Addr]string{v4: "mail.example.com.", v6: "v6.example.com."} {
		names, err := s.Resolver().LookupAddr(ctx, a.String())
		if err != nil || !slices.Equal(names, []string{want}) {
			t.Fatalf("DNS PTR of %s: %v %v, want %s", a, names, err, want)
		}
	}
	if got := ptrInZone(t, s, "113.0.203.in-addr.arpa."); got != "mail.example.com." {
		t.Fatalf("API PTR %q", got)
	}
	if err := c.DeletePTR(ctx, "113.0.203.in-addr.arpa", v4); err != nil {
		t.Fatal(err)
	}
	if got := ptrInZone(t, s, "113.0.203.in-addr.arpa."); got != "" {
		t.Fatalf("PTR left after delete: %q", got)
	}
	if err := c.DeletePTR(ctx, "113.0.203.in-addr.arpa", v4); err != nil {
		t.Fatalf("a second delete: %v", err)
	}
	bad := &rdns.PowerDNS{URL: s.URL, APIKey: "wrong-key-0123456789", ServerID: "localhost"}
	err := bad.SetPTR(ctx, "113.0.203.in-addr.arpa", v4, "x.example.com")
	if err == nil || strings.Contains(err.Error(), "wrong-key-0123456789") || strings.Contains(err.Error(), s.APIKey) {
		t.Fatalf("wrong key: %v", err)
	}
}

// ptrInZone reads the zone through the API and returns its PTR content ("" without one).
func ptrInZone(t *testing.T, s *pdnstest.Server, zone string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/servers/localhost/zones/"+zone, nil)
	req.Header.Set("X-API-Key", s.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var z struct {
		RRSets []struct {
			Type    string `json:"type"`
			Records []struct {
				Content string `json:"content"`
			} `json:"records"`
		} `json:"rrsets"`
	}
	if err := json.NewDecoder(res.Body).Decode(&z); err != nil {
		t.Fatal(err)
	}
	for _, rr := range z.RRSets {
		if rr.Type == "PTR" && len(rr.Records) > 0 {
			return rr.Records[0].Content
		}
	}
	return ""
}
