package pve

// GuestFirewallOptions is GET .../{qemu|lxc}/{vmid}/firewall/options. Unset
// options are nil: their defaults differ (macfilter and ndp default on,
// enable and ipfilter off).
type GuestFirewallOptions struct {
	Enable      *Bool  `json:"enable,omitempty"`
	IPFilter    *Bool  `json:"ipfilter,omitempty"`
	MACFilter   *Bool  `json:"macfilter,omitempty"`
	DHCP        *Bool  `json:"dhcp,omitempty"`
	NDP         *Bool  `json:"ndp,omitempty"`
	RAdv        *Bool  `json:"radv,omitempty"`
	PolicyIn    string `json:"policy_in,omitempty"`
	PolicyOut   string `json:"policy_out,omitempty"`
	LogLevelIn  string `json:"log_level_in,omitempty"`
	LogLevelOut string `json:"log_level_out,omitempty"`
}

// GuestFirewallOptionsUpdate is PUT .../firewall/options (synchronous).
// Only set fields are sent.
type GuestFirewallOptionsUpdate struct {
	Enable      *bool    `pve:"enable"`
	IPFilter    *bool    `pve:"ipfilter"`
	MACFilter   *bool    `pve:"macfilter"`
	DHCP        *bool    `pve:"dhcp"`
	NDP         *bool    `pve:"ndp"`
	RAdv        *bool    `pve:"radv"`
	PolicyIn    string   `pve:"policy_in"`
	PolicyOut   string   `pve:"policy_out"`
	LogLevelIn  string   `pve:"log_level_in"`
	LogLevelOut string   `pve:"log_level_out"`
	Delete      []string `pve:"delete,list"`
	Digest      string   `pve:"digest"`
}

// IPSet is one row of GET .../firewall/ipset. An ipset named exactly
// "ipfilter-net0" restricts the source addresses of net0.
type IPSet struct {
	Name    string `json:"name"`
	Comment string `json:"comment,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// IPSetEntry is one row of GET .../firewall/ipset/{name}.
type IPSetEntry struct {
	CIDR    string `json:"cidr"`
	Comment string `json:"comment,omitempty"`
	NoMatch Bool   `json:"nomatch,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// IPSetEntryRequest is POST .../firewall/ipset/{name}.
type IPSetEntryRequest struct {
	CIDR    string `pve:"cidr"`
	Comment string `pve:"comment"`
	NoMatch bool   `pve:"nomatch"`
}
