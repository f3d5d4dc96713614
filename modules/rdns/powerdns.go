// Package rdns sets reverse DNS (PTR) records through PowerDNS's HTTP API (R55).
package rdns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// PowerDNS is a client of PowerDNS's HTTP API: URL is the server's base URL
// (http://127.0.0.1:8081); the client adds /api/v1/servers/{server_id}/…. The API key is sent in
// X-API-Key and never appears in an error.
type PowerDNS struct {
	URL      string
	APIKey   string
	ServerID string
	HTTP     *http.Client // nil: a client with a 10 s time-out
}

// ReverseName is the PTR owner name of an address, fully qualified: 10.113.0.203.in-addr.arpa.
// or the 32 nibbles of an IPv6 address under ip6.arpa.
func ReverseName(a netip.Addr) string {
	if a.Is4() || a.Is4In6() {
		b := a.Unmap().As4()
		return fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa.", b[3], b[2], b[1], b[0])
	}
	b := a.As16()
	var sb strings.Builder
	for i := len(b) - 1; i >= 0; i-- {
		fmt.Fprintf(&sb, "%x.%x.", b[i]&0x0f, b[i]>>4)
	}
	sb.WriteString("ip6.arpa.")
	return sb.String()
}

// rrset is one entry of a PATCH body.
type rrset struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	TTL        int      `json:"ttl,omitempty"`
	ChangeType string   `json:"changetype"`
	Records    []record `json:"records"`
}

type record struct {
	Content  string `json:"content"`
	Disabled bool   `json:"disabled"`
}

// TTL of the PTR records pvebill writes.
const TTL = 3600

// SetPTR replaces the PTR record of addr in zone with hostname (a trailing dot is added).
func (p *PowerDNS) SetPTR(ctx context.Context, zone string, addr netip.Addr, hostname string) error {
	host := strings.TrimSuffix(hostname, ".") + "."
	return p.patch(ctx, zone, rrset{Name: ReverseName(addr), Type: "PTR", TTL: TTL, ChangeType: "REPLACE",
		Records: []record{{Content: host}}})
}

// DeletePTR removes the PTR record of addr from zone; removing one that is not there succeeds.
func (p *PowerDNS) DeletePTR(ctx context.Context, zone string, addr netip.Addr) error {
	return p.patch(ctx, zone, rrset{Name: ReverseName(addr), Type: "PTR", ChangeType: "DELETE", Records: []record{}})
}

func (p *PowerDNS) patch(ctx context.Context, zone string, rs rrset) error {
	body, err := json.Marshal(map[string]any{"rrsets": []rrset{rs}})
	if err != nil {
		return err
	}
	zone = strings.TrimSuffix(zone, ".") + "."
	u := strings.TrimSuffix(p.URL, "/") + "/api/v1/servers/" + url.PathEscape(p.ServerID) + "/zones/" + url.PathEscape(zone)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("powerdns: %w", err)
	}
	req.Header.Set("X-API-Key", p.APIKey)
	req.Header.Set("Content-Type", "application/json")
	hc := p.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	res, err := hc.Do(req)
	if err != nil {
		// The transport's own error, without the URL that *url.Error adds.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("powerdns PATCH zone %s: %w", zone, err)
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusNoContent && res.StatusCode != http.StatusOK {
		return &StatusError{Zone: zone, Status: res.StatusCode, Message: strings.TrimSpace(string(msg))}
	}
	return nil
}

// StatusError is an answer of PowerDNS other than success. Its message is PowerDNS's (the
// API never echoes the key).
type StatusError struct {
	Zone    string
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("powerdns PATCH zone %s: %d %s: %s", e.Zone, e.Status, http.StatusText(e.Status), e.Message)
}

// Refused reports whether err is PowerDNS refusing the change (a 4xx answer: no such zone, a
// wrong key, a bad record), which no retry by itself mends, as opposed to PowerDNS not
// answering or failing (5xx).
func Refused(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status >= 400 && se.Status < 500
}
