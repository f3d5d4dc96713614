package plans

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// VMTemplate is one entry of a plan's VM catalog: a template's vmid (`"debian-12": 9000`), or a
// template's name (`"debian-12": "debian-12-cloud"`), which every node's VM template of that
// name answers (hosts keep one copy per node, each with its own vmid). It is written as a JSON
// number or string, and read back the same way.
type VMTemplate struct {
	VMID int
	Name string
}

// String is the entry as written: the vmid or the name.
func (t VMTemplate) String() string {
	if t.Name != "" {
		return t.Name
	}
	return strconv.Itoa(t.VMID)
}

// MarshalJSON writes the vmid as a number, a name as a string.
func (t VMTemplate) MarshalJSON() ([]byte, error) {
	if t.Name != "" {
		return json.Marshal(t.Name)
	}
	return json.Marshal(t.VMID)
}

// errVMTemplate is an entry that is neither a number nor a string.
var errVMTemplate = errors.New("a VM catalog entry is a template vmid (a number) or a template name (a string)")

// UnmarshalJSON reads a number as the vmid and a string as the name.
func (t *VMTemplate) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*t = VMTemplate{}
		return json.Unmarshal(b, &t.Name)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errVMTemplate
	}
	id, err := n.Int64()
	if err != nil || id != int64(int(id)) {
		return errVMTemplate
	}
	*t = VMTemplate{VMID: int(id)}
	return nil
}

// UnmarshalYAML reads a plans file's entry: an integer as the vmid, any other scalar as the name.
func (t *VMTemplate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errVMTemplate
	}
	if n.Tag == "!!int" {
		id, err := strconv.Atoi(n.Value)
		if err != nil {
			return errVMTemplate
		}
		*t = VMTemplate{VMID: id}
		return nil
	}
	*t = VMTemplate{Name: n.Value}
	return nil
}

// MarshalYAML writes the entry as it is read.
func (t VMTemplate) MarshalYAML() (any, error) {
	if t.Name != "" {
		return t.Name, nil
	}
	return t.VMID, nil
}

// vmNamePattern is Proxmox's VM name format (pve-guest-common's dns-name): labels of letters,
// digits and hyphens, joined by dots.
var vmNamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// The range of Proxmox's vmids.
const (
	MinVMID = 100
	MaxVMID = 999999999
)

// Valid reports whether the entry names a template Proxmox could hold: a vmid in Proxmox's
// range, or a VM name of at most 128 characters.
func (t VMTemplate) Valid() bool {
	if t.Name != "" {
		return len(t.Name) <= 128 && vmNamePattern.MatchString(t.Name)
	}
	return t.VMID >= MinVMID && t.VMID <= MaxVMID
}
