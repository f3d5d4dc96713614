package pve

import (
	"context"
	"net/http"
	"net/url"
)

// FirewallClient addresses one guest's firewall
// (/nodes/{node}/{lxc|qemu}/{vmid}/firewall).
type FirewallClient struct{ g guest }

// Options reads GET .../firewall/options.
func (f *FirewallClient) Options(ctx context.Context) (GuestFirewallOptions, error) {
	var out GuestFirewallOptions
	err := f.g.callValues(ctx, http.MethodGet, "/firewall/options", nil, &out)
	return out, err
}

// SetOptions sends PUT .../firewall/options (synchronous).
func (f *FirewallClient) SetOptions(ctx context.Context, u GuestFirewallOptionsUpdate) error {
	return f.g.call(ctx, http.MethodPut, "/firewall/options", u, nil)
}

// IPSets lists GET .../firewall/ipset.
func (f *FirewallClient) IPSets(ctx context.Context) ([]IPSet, error) {
	var out []IPSet
	err := f.g.callValues(ctx, http.MethodGet, "/firewall/ipset", nil, &out)
	return out, err
}

// CreateIPSet sends POST .../firewall/ipset. For anti-spoofing on a VM the
// set must be named exactly "ipfilter-net0" (per NIC: ipfilter-netN).
func (f *FirewallClient) CreateIPSet(ctx context.Context, name, comment string) error {
	if err := checkIdent("ipset", name); err != nil {
		return err
	}
	q := url.Values{"name": {name}}
	if comment != "" {
		q.Set("comment", comment)
	}
	return f.g.callValues(ctx, http.MethodPost, "/firewall/ipset", q, nil)
}

// IPSetEntries lists GET .../firewall/ipset/{name}.
func (f *FirewallClient) IPSetEntries(ctx context.Context, name string) ([]IPSetEntry, error) {
	if err := checkIdent("ipset", name); err != nil {
		return nil, err
	}
	var out []IPSetEntry
	err := f.g.callValues(ctx, http.MethodGet, "/firewall/ipset/"+name, nil, &out)
	return out, err
}

// AddIPSetEntry sends POST .../firewall/ipset/{name} with a CIDR.
func (f *FirewallClient) AddIPSetEntry(ctx context.Context, name string, e IPSetEntryRequest) error {
	if err := checkIdent("ipset", name); err != nil {
		return err
	}
	return f.g.call(ctx, http.MethodPost, "/firewall/ipset/"+name, e, nil)
}

// DeleteIPSetEntry sends DELETE .../firewall/ipset/{name}/{cidr}.
func (f *FirewallClient) DeleteIPSetEntry(ctx context.Context, name, cidr string) error {
	if err := checkIdent("ipset", name); err != nil {
		return err
	}
	return f.g.callValues(ctx, http.MethodDelete, "/firewall/ipset/"+name+"/"+url.PathEscape(cidr), nil, nil)
}
