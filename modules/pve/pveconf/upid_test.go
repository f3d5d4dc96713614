package pveconf

import (
	"errors"
	"testing"
	"time"
)

func TestParseUPID(t *testing.T) {
	tests := []struct {
		in   string
		want UPID
	}{
		{"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:", UPID{
			Node: "pve1", PID: 0x0012ABCD, PStart: 0x0A1B2C3D, StartTime: time.Unix(0x6650F00D, 0).UTC(),
			Type: "vzcreate", ID: "5001", User: "svc@pve!provision"}},
		{"UPID:node-2:000F4240:1A2B3C4D5:6650F00D:vzdump::root@pam:", UPID{
			Node: "node-2", PID: 1000000, PStart: 0x1A2B3C4D5, StartTime: time.Unix(0x6650F00D, 0).UTC(),
			Type: "vzdump", User: "root@pam"}},
		{"UPID:a:0012abcd:0a1b2c3d:6650f00d:qmclone:100:svc@pve!provision:", UPID{
			Node: "a", PID: 0x0012ABCD, PStart: 0x0A1B2C3D, StartTime: time.Unix(0x6650F00D, 0).UTC(),
			Type: "qmclone", ID: "100", User: "svc@pve!provision"}},
	}
	for _, tt := range tests {
		got, err := ParseUPID(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseUPID(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		back, err := ParseUPID(got.String())
		if err != nil || back != got {
			t.Errorf("ParseUPID(%q.String()) = %+v, %v", tt.in, back, err)
		}
	}
	u, _ := ParseUPID(tests[0].in)
	if u.String() != tests[0].in {
		t.Errorf("String() = %q; want %q", u.String(), tests[0].in)
	}
	if got := u.StartTime.Format(time.RFC3339); got != "2024-05-24T19:52:45Z" {
		t.Errorf("StartTime = %s", got)
	}
}

func TestParseUPIDErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision",   // no trailing colon
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision::", // one colon too many
		"upid:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:0012ABCD:A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D4E:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:0012ABCG:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve_1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:-pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1-:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID::0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D::5001:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vz/create:5001:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:50 01:root@pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001::",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root\u00a0pam:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:\n",
		" UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:root@pam:",
		"OK",
	} {
		if got, err := ParseUPID(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseUPID(%q) = %+v, %v; want a syntax error", in, got, err)
		}
	}
}
