package pveconf

import (
	"strings"
	"unicode"
)

// Option is one key=value pair of a property string, kept in config order.
type Option struct {
	Key   string
	Value string
}

// propPart is one comma-separated part of a property string. A part
// without "=" has no key and is the value of the format's default key.
type propPart struct {
	key, value string
	keyed      bool
}

// splitProps splits a property string the way pve-common's
// parse_property_string does: parts are separated by commas, parts made of
// white space only are skipped, a part with "=" must be key=value with a
// non-empty key and value (the value may itself contain "="), and a part
// without "=" is a value for the default key. Keys must look like Proxmox
// keys, a key may appear once, and so may the default key.
func splitProps(what, s string) ([]propPart, error) {
	if strings.ContainsAny(s, "\n\r\x00") {
		return nil, syntaxErr(what, s, "contains a line break or NUL")
	}
	parts := make([]propPart, 0, strings.Count(s, ",")+1)
	defaultSeen := false
	for p := range strings.SplitSeq(s, ",") {
		if strings.TrimFunc(p, unicode.IsSpace) == "" {
			continue
		}
		k, v, found := strings.Cut(p, "=")
		if !found {
			if defaultSeen {
				return nil, syntaxErr(what, s, "more than one value without a key")
			}
			defaultSeen = true
			parts = append(parts, propPart{value: p})
			continue
		}
		if k == "" || v == "" {
			return nil, syntaxErr(what, s, "missing key or value in "+quotePart(p))
		}
		if !validPropKey(k) {
			return nil, syntaxErr(what, s, "invalid key "+quotePart(k))
		}
		for _, q := range parts {
			if q.keyed && q.key == k {
				return nil, syntaxErr(what, s, "duplicate key "+quotePart(k))
			}
		}
		parts = append(parts, propPart{key: k, value: v, keyed: true})
	}
	return parts, nil
}

func quotePart(s string) string { return "'" + shorten(s) + "'" }

// validPropKey accepts the keys used by Proxmox property formats
// (letters, digits, "-" and "_", e.g. link_down, host-managed,
// e1000-82540em).
func validPropKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' {
			return false
		}
	}
	return k != ""
}

// parseBool mirrors pve-common's parse_boolean: 1/on/yes/true and
// 0/off/no/false, case-insensitive.
func parseBool(v string) (val, ok bool) {
	switch strings.ToLower(v) {
	case "1", "on", "yes", "true":
		return true, true
	case "0", "off", "no", "false":
		return false, true
	}
	return false, false
}

// ValidStorageID reports whether id is a Proxmox storage id (pve-common
// parse_id, format pve-storage-id): a letter, then letters, digits, "-",
// "_" or ".", ending in a letter or digit, at least two characters;
// Proxmox matches it case-insensitively.
func ValidStorageID(id string) bool {
	if len(id) < 2 || !isLetter(id[0]) {
		return false
	}
	last := id[len(id)-1]
	if !isLetter(last) && !isDigit(last) {
		return false
	}
	for i := 1; i < len(id)-1; i++ {
		c := id[i]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
