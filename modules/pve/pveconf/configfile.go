package pveconf

import (
	"regexp"
	"strings"
)

// configLine is one "key: value" line of a guest config file, as qemu-server's
// parse_vm_config and pve-container's parse_pct_config read it.
var configLine = regexp.MustCompile(`^([a-z][a-z_]*\d*):\s*(.+?)\s*$`)

// ParseConfigFile reads the current section of a guest config file (what
// vzdump stores in an archive and extractconfig answers): its "key: value"
// lines up to the first section header ([PENDING], [snapshot name], ...).
// Comment lines (the description) and lines that do not parse are skipped, as
// Proxmox skips them with a warning.
func ParseConfigFile(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "[") {
			break
		}
		m := configLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		out[m[1]] = m[2]
	}
	return out
}
