package pvesim

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Parameter checks against the compiled schema, worded like PVE::JSONSchema: types,
// named formats, property strings, patterns, lengths, ranges and enums.

// Violation is one request that real Proxmox would have refused by its schema.
type Violation struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Template string            `json:"template,omitempty"`
	Status   int               `json:"status"`
	Message  string            `json:"message"`
	Errors   map[string]string `json:"errors,omitempty"`
}

func (v Violation) String() string {
	keys := make([]string, 0, len(v.Errors))
	for k := range v.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", v.Method, v.Path, v.Status, strings.TrimSpace(v.Message))
	for _, k := range keys {
		fmt.Fprintf(&b, " [%s: %s]", k, v.Errors[k])
	}
	return b.String()
}

// paramFor finds the definition of a parameter, including indexed families.
func (m *schemaMethod) paramFor(key string) *schemaParam {
	if p, ok := m.props[key]; ok {
		return p
	}
	i := len(key)
	for i > 0 && key[i-1] >= '0' && key[i-1] <= '9' {
		i--
	}
	if i == len(key) || i == 0 {
		return nil
	}
	ip, ok := m.indexed[key[:i]]
	if !ok {
		return nil
	}
	digits := key[i:]
	if len(digits) > 1 && digits[0] == '0' {
		return nil
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > ip.max {
		return nil
	}
	return ip.param
}

// validate checks all parameters of a request the way PVE::JSONSchema::validate does
// and returns the per-parameter errors (nil when valid).
func (m *schemaMethod) validate(params url.Values) map[string]string {
	var errs map[string]string
	add := func(k, msg string) {
		if errs == nil {
			errs = map[string]string{}
		}
		if old, ok := errs[k]; ok {
			errs[k] = old + "\n" + msg
			return
		}
		errs[k] = msg
	}
	for _, name := range m.required {
		if _, present := params[name]; !present {
			add(name, "property is missing and it is not optional")
		}
	}
	for key, vals := range params {
		p := m.paramFor(key)
		if p == nil {
			if m.additional == 0 {
				add(key, "property is not defined in schema and the schema does not allow additional properties")
			}
			continue
		}
		checkValue(key, p, strings.Join(vals, "\x00"), add)
	}
	for key := range params {
		p := m.paramFor(key)
		if p == nil || p.requires == "" {
			continue
		}
		if _, ok := params[p.requires]; !ok {
			add(p.requires, fmt.Sprintf("missing property - '%s' requires this property", key))
		}
	}
	return errs
}

// isInteger matches Perl's /^[+-]?\d+$/ (is_integer in PVE::JSONSchema).
func isInteger(v string) bool {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	return v != "" && allDigits(v)
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// isNumber matches /^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$/ (is_number).
func isNumber(v string) bool {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	mant, exp := v, ""
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		mant, exp = v[:i], v[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if exp == "" || !allDigits(exp) {
			return false
		}
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if !hasDot {
		return mant != "" && allDigits(mant)
	}
	if intPart == "" && frac == "" {
		return false
	}
	return allDigits(intPart) && allDigits(frac)
}

var (
	reVMID        = regexp.MustCompile(`^[1-9][0-9]{2,8}$`)
	reNodeName    = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)$`)
	reDNSName     = regexp.MustCompile(`^(([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)\.)*([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)$`)
	reConfigID    = regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]+$`)
	reStorageID   = regexp.MustCompile(`(?i)^[a-z][a-z0-9\-_.]*[a-z0-9]$`)
	reURLEnc      = regexp.MustCompile(`^[-%a-zA-Z0-9_.!~*'()]*$`)
	reMAC         = regexp.MustCompile(`(?i)^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$`)
	reTag         = regexp.MustCompile(`(?i)^[a-z0-9_][a-z0-9_\-+.]*$`)
	reDiskSize    = regexp.MustCompile(`^(\d+(\.\d+)?)([KMGT])?$`)
	rePoolID      = regexp.MustCompile(`(?i)^[a-z0-9_][a-z0-9_\-+.]*$`)
	reIface       = regexp.MustCompile(`(?i)^[a-z][a-z0-9_]{1,20}([:.]\d+)?$`)
	reStartupPart = regexp.MustCompile(`^((order=)?\d+|up=\d+|down=\d+)$`)
	reVolumeID    = regexp.MustCompile(`^(?i:[a-z][a-z0-9\-_.]*[a-z0-9]):.+$`)
)

// checkNamedFormat verifies the named formats that are cheap to check; unknown
// formats pass. Returns the Proxmox error text (with trailing newline) or "".
func checkNamedFormat(format, v string) string {
	base, kind := format, ""
	if strings.HasSuffix(format, "-list") {
		base, kind = strings.TrimSuffix(format, "-list"), "list"
	} else if strings.HasSuffix(format, "-opt") {
		base, kind = strings.TrimSuffix(format, "-opt"), "opt"
	}
	check := func(x string) string { return checkOneFormat(base, x) }
	switch kind {
	case "list":
		for _, x := range splitList(v) {
			if msg := check(x); msg != "" {
				return msg
			}
		}
		return ""
	case "opt":
		if v == "" {
			return ""
		}
	}
	return check(v)
}

// splitList mirrors PVE::Tools::split_list: separators are NUL, comma, semicolon and whitespace.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool {
		return r == 0 || r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

func validStartup(v string) bool {
	if v == "" {
		return false
	}
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if !reStartupPart.MatchString(p) {
			return false
		}
	}
	return true
}

// namedFormat is a named parameter format: a check and the message of a value that
// fails it (with %s, the value).
type namedFormat struct {
	ok  func(v string) bool
	msg string
}

func matches(re *regexp.Regexp) func(string) bool { return re.MatchString }

func isIP(v string) bool { return isIPv4(v) || isIPv6(v) }

func isAnyCIDR(v string) bool { return isCIDR(v, 4) || isCIDR(v, 6) }

// namedFormats are the cheap named formats of PVE::JSONSchema the simulator checks.
var namedFormats = map[string]namedFormat{
	"pve-vmid":       {matches(reVMID), "value does not look like a valid VM ID\n"},
	"pve-node":       {matches(reNodeName), "value does not look like a valid node name\n"},
	"dns-name":       {matches(reDNSName), "value does not look like a valid DNS name\n"},
	"pve-configid":   {matches(reConfigID), "invalid configuration ID '%s'\n"},
	"pve-storage-id": {matches(reStorageID), "storage ID '%s' contains illegal characters\n"},
	"urlencoded":     {matches(reURLEnc), "invalid urlencoded string: %s\n"},
	"mac-addr":       {matches(reMAC), "value does not look like a valid unicast MAC address\n"},
	"pve-tag":        {matches(reTag), "invalid characters in tag\n"},
	"disk-size":      {matches(reDiskSize), "value does not look like a valid disk size: %s\n"},
	"pve-poolid":     {matches(rePoolID), "pool name '%s' contains illegal characters\n"},
	"pve-iface":      {matches(reIface), "invalid network interface name '%s'\n"},
	"ipv4":           {isIPv4, "value does not look like a valid IPv4 address\n"},
	"ipv6":           {isIPv6, "value does not look like a valid IPv6 address\n"},
	"ip":             {isIP, "value does not look like a valid IP address\n"},
	"address": {func(v string) bool { return isIP(v) || reDNSName.MatchString(v) },
		"value does not look like a valid address: %s\n"},
	"CIDRv4":   {func(v string) bool { return isCIDR(v, 4) }, "value does not look like a valid IPv4 CIDR network\n"},
	"CIDRv6":   {func(v string) bool { return isCIDR(v, 6) }, "value does not look like a valid IPv6 CIDR network\n"},
	"CIDR":     {isAnyCIDR, "value does not look like a valid CIDR network\n"},
	"IPorCIDR": {func(v string) bool { return isIP(v) || isAnyCIDR(v) }, "value does not look like a valid IP address or CIDR network\n"},
	"pve-ipv4-config": {func(v string) bool { return v == "dhcp" || v == "manual" || isCIDR(v, 4) },
		"value does not look like a valid ipv4 network configuration\n"},
	"pve-ipv6-config": {func(v string) bool { return v == "auto" || v == "dhcp" || v == "manual" || isCIDR(v, 6) },
		"value does not look like a valid ipv6 network configuration\n"},
	"pve-startup-order": {validStartup, "unable to parse startup options\n"},
	"pve-volume-id": {func(v string) bool { return strings.HasPrefix(v, "/") || reVolumeID.MatchString(v) },
		"unable to parse volume ID '%s'\n"},
}

// checkOneFormat checks v against a named format; "" means valid or not checked.
func checkOneFormat(format, v string) string {
	if format == "pve-qm-ipconfig" {
		return checkIPConfig(v)
	}
	nf, ok := namedFormats[format]
	if !ok || nf.ok(v) {
		return ""
	}
	if strings.Contains(nf.msg, "%s") {
		return fmt.Sprintf(nf.msg, v)
	}
	return nf.msg
}

// checkValue checks one value against its parameter schema and adds the first failure.
func checkValue(path string, p *schemaParam, v string, add func(k, msg string)) {
	if p.oneOf {
		return
	}
	if p.typ == "array" {
		if p.items != nil {
			for i, el := range strings.Split(v, "\x00") {
				checkValue(fmt.Sprintf("%s[%d]", path, i), p.items, el, add)
			}
		}
		return
	}
	for _, check := range []func(path string, p *schemaParam, v string) string{
		checkType, checkFormat, checkPattern, checkLength, checkRange, checkEnum,
	} {
		if msg := check(path, p, v); msg != "" {
			add(path, msg)
			return
		}
	}
}

func checkType(_ string, p *schemaParam, v string) string {
	ok := true
	switch p.typ {
	case "boolean":
		ok = v == "0" || v == "1"
	case "integer":
		ok = isInteger(v)
	case "number":
		ok = isNumber(v)
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("type check ('%s') failed - got '%s'", p.typ, v)
}

func checkFormat(path string, p *schemaParam, v string) string {
	msg := ""
	if p.props != nil {
		msg = checkPropertyString(path, p, v)
	} else if p.format != "" {
		msg = checkNamedFormat(p.format, v)
	}
	if msg == "" {
		return ""
	}
	return "invalid format - " + msg
}

func checkPattern(_ string, p *schemaParam, v string) string {
	if p.pattern != nil && !p.pattern.MatchString(v) {
		return "value does not match the regex pattern"
	}
	return ""
}

func checkLength(_ string, p *schemaParam, v string) string {
	if p.maxLen >= 0 && len(v) > p.maxLen {
		return fmt.Sprintf("value may only be %d characters long", p.maxLen)
	}
	if p.minLen >= 0 && len(v) < p.minLen {
		return fmt.Sprintf("value must be at least %d characters long", p.minLen)
	}
	return ""
}

func checkRange(_ string, p *schemaParam, v string) string {
	if (p.max == nil && p.min == nil) || !isNumber(v) {
		return ""
	}
	f, _ := strconv.ParseFloat(v, 64)
	if p.max != nil && f > *p.max {
		return fmt.Sprintf("value must have a maximum value of %s", strconv.FormatFloat(*p.max, 'f', -1, 64))
	}
	if p.min != nil && f < *p.min {
		return fmt.Sprintf("value must have a minimum value of %s", strconv.FormatFloat(*p.min, 'f', -1, 64))
	}
	return ""
}

func checkEnum(_ string, p *schemaParam, v string) string {
	if len(p.enum) == 0 || slices.Contains(p.enum, v) {
		return ""
	}
	return fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(p.enum, ", "))
}

// checkPropertyString checks a property string such as net0 or rootfs: its keys, then
// each value against its property.
func checkPropertyString(path string, p *schemaParam, v string) string {
	got, msg := parsePropertyString(p, v)
	if msg != "" {
		return msg
	}
	var sub []string
	add := func(k, msg string) { sub = append(sub, k+": "+msg) }
	for _, k := range p.required {
		if _, ok := got[k]; !ok {
			add(path+"."+k, "property is missing and it is not optional")
		}
	}
	for k, val := range got {
		sp := p.props[k]
		if sp.typ == "boolean" {
			switch strings.ToLower(val) {
			case "1", "on", "yes", "true":
				val = "1"
			case "0", "off", "no", "false":
				val = "0"
			}
		}
		checkValue(path+"."+k, sp, val, add)
	}
	if len(sub) > 0 {
		sort.Strings(sub)
		return "format error\n" + strings.Join(sub, "\n") + "\n"
	}
	return ""
}

// parsePropertyString splits a property string into its keys (aliases resolved, a bare
// value under the default key), or returns why it cannot.
func parsePropertyString(p *schemaParam, v string) (map[string]string, string) {
	got := map[string]string{}
	dup := func(k string) string { return fmt.Sprintf("duplicate key in comma-separated list property: %s\n", k) }
	for _, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, val, hasEq := strings.Cut(part, "=")
		switch {
		case hasEq && k != "" && val != "":
			if _, seen := got[k]; seen {
				return nil, dup(k)
			}
			if ka, ok := p.keyAliases[k]; ok {
				if _, seen := got[ka]; seen {
					return nil, dup(ka)
				}
				got[ka] = k
			}
			if a, ok := p.aliases[k]; ok {
				k = a
			}
			if _, known := p.props[k]; !known {
				return nil, fmt.Sprintf("invalid key in comma-separated list property: %s\n", k)
			}
			got[k] = val
		case hasEq:
			return nil, "missing key in comma-separated list property\n"
		case p.defaultKey == "":
			return nil, "value without key, but schema does not define a default key\n"
		default:
			if _, seen := got[p.defaultKey]; seen {
				return nil, dup(p.defaultKey)
			}
			got[p.defaultKey] = part
		}
	}
	return got, ""
}

// checkIPConfig checks a VM's ipconfigN (pve-qm-ipconfig).
func checkIPConfig(v string) string {
	kv := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		if part == "" {
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			return "value without key, but schema does not define a default key\n"
		}
		switch k {
		case "ip", "gw", "ip6", "gw6":
		default:
			return fmt.Sprintf("invalid key in comma-separated list property: %s\n", k)
		}
		kv[k] = val
	}
	if ip, ok := kv["ip"]; ok && ip != "dhcp" && !isCIDR(ip, 4) {
		return "format error\nip: invalid format - value does not look like a valid ipv4 network configuration\n"
	}
	if ip, ok := kv["ip6"]; ok && ip != "dhcp" && ip != "auto" && !isCIDR(ip, 6) {
		return "format error\nip6: invalid format - value does not look like a valid ipv6 network configuration\n"
	}
	if msg := checkIPConfigGateway(kv, "gw", "ip", "IPv4", isIPv4); msg != "" {
		return msg
	}
	return checkIPConfigGateway(kv, "gw6", "ip6", "IPv6", isIPv6)
}

// checkIPConfigGateway checks a gateway key of an ipconfigN: a valid address, beside a
// static address of its family.
func checkIPConfigGateway(kv map[string]string, gwKey, ipKey, family string, valid func(string) bool) string {
	gw, ok := kv[gwKey]
	if !ok {
		return ""
	}
	if !valid(gw) {
		return fmt.Sprintf("format error\n%s: invalid format - value does not look like a valid %s address\n", gwKey, family)
	}
	ip, ok := kv[ipKey]
	if !ok {
		return fmt.Sprintf("format error\n%s: missing property - '%s' requires this property\n", ipKey, gwKey)
	}
	if ip == "dhcp" || (ipKey == "ip6" && ip == "auto") {
		return "gateway specified together with DHCP\n"
	}
	return ""
}
