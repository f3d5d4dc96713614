package pve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Int is an integer that decodes from a JSON number or a JSON string
// ("100"): /cluster/nextid answers {"data":"100"}, and /nodes/{node}/lxc sent
// vmid as a string before PVE 8.2. null and "" decode to 0. It encodes as a
// JSON number.
type Int int64

// UnmarshalJSON accepts 5001, 5001.0, "5001", "" and null.
func (n *Int) UnmarshalJSON(b []byte) error {
	s, err := lenientScalar(b)
	if err != nil {
		return fmt.Errorf("pve: decode integer: %w", err)
	}
	if s == "" {
		*n = 0
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) {
		return fmt.Errorf("pve: decode integer from %q", s)
	}
	*n = Int(f)
	return nil
}

// Int returns the value as an int.
func (n Int) Int() int { return int(n) }

// Float is a number that decodes from a JSON number or a JSON string (pressure
// values and some load figures arrive as strings). null and "" decode to 0.
type Float float64

// UnmarshalJSON accepts 0.25, "0.25", "" and null.
func (f *Float) UnmarshalJSON(b []byte) error {
	s, err := lenientScalar(b)
	if err != nil {
		return fmt.Errorf("pve: decode number: %w", err)
	}
	if s == "" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("pve: decode number from %q", s)
	}
	*f = Float(v)
	return nil
}

// Bool is a boolean that decodes from Proxmox's 0/1 integers as well as JSON
// true/false and the strings "0", "1", "true", "false", "yes", "no", "on",
// "off" (the spellings pve-common's JSON schema parser accepts). null and ""
// decode to false. It encodes as a JSON boolean.
type Bool bool

// UnmarshalJSON accepts the spellings listed on [Bool].
func (v *Bool) UnmarshalJSON(b []byte) error {
	s, err := lenientScalar(b)
	if err != nil {
		return fmt.Errorf("pve: decode boolean: %w", err)
	}
	switch strings.ToLower(s) {
	case "", "0", "false", "no", "off":
		*v = false
	case "1", "true", "yes", "on":
		*v = true
	default:
		return fmt.Errorf("pve: decode boolean from %q", s)
	}
	return nil
}

// lenientScalar returns the text of a JSON scalar: a string's content, a
// number's or boolean's literal, "" for null.
func lenientScalar(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return "", nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return strings.TrimSpace(s), nil
	}
	if b[0] == '{' || b[0] == '[' {
		return "", fmt.Errorf("not a scalar: %.20s", b)
	}
	return string(b), nil
}
