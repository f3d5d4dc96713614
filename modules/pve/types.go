package pve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Text is a string that also decodes from a JSON number or boolean: pending
// config values come back as whatever type the config parser produced.
type Text string

// UnmarshalJSON accepts a string, a number, a boolean or null.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	s, err := lenientScalar(b)
	if err != nil {
		return fmt.Errorf("pve: decode text: %w", err)
	}
	*t = Text(s)
	return nil
}

// Secret is a string sent to Proxmox as is but never printed: fmt and JSON
// render it as "[redacted]". Used for root and cloud-init passwords.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON hides the value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// ResizeRequest grows one disk. Size is Proxmox's resize size: bytes unless a
// K/M/G/T suffix is given, a leading "+" grows by the amount ("+2G") instead
// of to it. Digest, when set, refuses the change if the config was modified.
type ResizeRequest struct {
	Disk   string `pve:"disk"`
	Size   string `pve:"size"`
	Digest string `pve:"digest"`
}

// HAStatus is the "ha" object of a guest's status/current.
type HAStatus struct {
	Managed Bool   `json:"managed"`
	State   string `json:"state,omitempty"`
	Group   string `json:"group,omitempty"`
}

// Pressure holds the PSI figures PVE 9 reports per guest. They are absent on
// older versions, so every field is a pointer: nil is "not reported", never 0.
type Pressure struct {
	CPUSome    *Float `json:"pressurecpusome,omitempty"`
	CPUFull    *Float `json:"pressurecpufull,omitempty"`
	IOSome     *Float `json:"pressureiosome,omitempty"`
	IOFull     *Float `json:"pressureiofull,omitempty"`
	MemorySome *Float `json:"pressurememorysome,omitempty"`
	MemoryFull *Float `json:"pressurememoryfull,omitempty"`
}

// indexedKeys collects the config keys prefix0..prefixN (net0, mp3, ...) into
// a map by index, or nil when there are none.
func indexedKeys(raw map[string]json.RawMessage, prefix string) map[int]string {
	var out map[int]string
	for k, v := range raw {
		i, ok := keyIndex(k, prefix)
		if !ok {
			continue
		}
		var t Text
		if err := json.Unmarshal(v, &t); err != nil {
			t = Text(v)
		}
		if out == nil {
			out = map[int]string{}
		}
		out[i] = string(t)
	}
	return out
}

// keyIndex returns N for a key spelled prefixN.
func keyIndex(key, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || rest == "" || len(rest) > 4 {
		return 0, false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	if len(rest) > 1 && rest[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}
