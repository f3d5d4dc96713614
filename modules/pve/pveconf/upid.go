package pveconf

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// UPID is a decoded Proxmox task id (docs/proxmox.md §2.3).
type UPID struct {
	Node      string    // the node the task runs on; query that node for its status
	PID       int64     // worker process id
	PStart    int64     // process start, in clock ticks since boot
	StartTime time.Time // task start, UTC, second precision
	Type      string    // vzcreate, qmclone, vzdump, ...
	ID        string    // usually the vmid (qmclone: the source); may be empty
	User      string    // user or full token id, svc@pve!provision
}

// upidRe is pve-common PVE::UPID decode's pattern.
var upidRe = regexp.MustCompile(`^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`)

// ParseUPID decodes UPID:node:PID:PSTART:STARTTIME:type:id:user: with the
// trailing colon, as PVE::UPID::decode does: PID and STARTTIME are 8 hex
// digits, PSTART 8 or 9.
func ParseUPID(s string) (UPID, error) {
	m := upidRe.FindStringSubmatch(s)
	if m == nil {
		return UPID{}, syntaxErr("upid", s, "not UPID:node:pid:pstart:starttime:type:id:user:")
	}
	// Perl's \s also covers Unicode white space, which Go's \s does not.
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return UPID{}, syntaxErr("upid", s, "contains white space")
	}
	pid, _ := strconv.ParseInt(m[2], 16, 64)
	pstart, _ := strconv.ParseInt(m[3], 16, 64)
	start, _ := strconv.ParseInt(m[4], 16, 64)
	return UPID{
		Node:      m[1],
		PID:       pid,
		PStart:    pstart,
		StartTime: time.Unix(start, 0).UTC(),
		Type:      m[5],
		ID:        m[6],
		User:      m[7],
	}, nil
}
