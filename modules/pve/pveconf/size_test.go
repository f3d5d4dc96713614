package pveconf

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	nines := "1." + strings.Repeat("9", 50)
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{"0", 0, nil},
		{"1000", 1000, nil},
		{"1.5", 1, nil}, // a bare number is bytes, truncated like Perl's int()
		{"8G", 8 * GiB, nil},
		{"8704M", 9126805504, nil},
		{"8.5G", 9126805504, nil},
		{"0.5K", 512, nil},
		{"0.1K", 102, nil},
		{"1.001K", 1025, nil},
		{"1.0001K", 1024, nil},
		{"30G", 30 * GiB, nil},
		{"1T", TiB, nil},
		{"8GiB", 8 * GiB, nil},
		{"512KiB", 512 * KiB, nil},
		{"3MiB", 3 * MiB, nil},
		{"2TiB", 2 * TiB, nil},
		{"00008G", 8 * GiB, nil},
		{nines + "T", 2*TiB - 1, nil}, // exact, not rounded up to 2T
		{"0." + strings.Repeat("0", 60) + "1T", 0, nil},
		{"8388607T", math.MaxInt64 - (TiB - 1), nil},
		{"9223372036854775807", math.MaxInt64, nil},
		{"8388608T", 0, ErrRange},
		{"9223372036854775808", 0, ErrRange},
		{"99999999999999999999999999G", 0, ErrRange},
		{"", 0, ErrSyntax},
		{"-1", 0, ErrSyntax},
		{"-1G", 0, ErrSyntax},
		{"+1G", 0, ErrSyntax},
		{"8 G", 0, ErrSyntax},
		{" 8G", 0, ErrSyntax},
		{"8G ", 0, ErrSyntax},
		{"8g", 0, ErrSyntax},
		{"8KB", 0, ErrSyntax},
		{"8Gi", 0, ErrSyntax},
		{"8gib", 0, ErrSyntax},
		{"8.G", 0, ErrSyntax},
		{".5G", 0, ErrSyntax},
		{"8..5G", 0, ErrSyntax},
		{"8.5.1G", 0, ErrSyntax},
		{"G", 0, ErrSyntax},
		{"8P", 0, ErrSyntax},
		{"0x10", 0, ErrSyntax},
		{"1e3", 0, ErrSyntax},
		{"1,024", 0, ErrSyntax},
		{"８G", 0, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ParseSize(%q) = %d, %v; want error %v", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseConfigSize(t *testing.T) {
	tests := []struct {
		in    string
		bytes int64
		known bool
	}{
		{"8G", 8 * GiB, true},
		{"8704M", 9126805504, true},
		{"8.5G", 9126805504, true},
		{"30G", 30 * GiB, true},
		{"8GiB", 8 * GiB, true},
		{"1000", 1000, true},           // not KiB-aligned: only bytes makes sense
		{"8388609", 8388609, true},     // likewise
		{"0", 0, true},                 // 0 bytes and 0 KiB agree
		{"1024", 1024, false},          // Proxmox would have written 1K
		{"8388608", 8 * MiB, false},    // 8M, or 8 GiB meant as KiB?
		{"8589934592", 8 * GiB, false}, // Proxmox writes 8G
		{"1.5", 1, false},              // Proxmox never writes a bare fraction
		{"2048.0", 2048, false},
	}
	for _, tt := range tests {
		b, known, err := ParseConfigSize(tt.in)
		if err != nil || b != tt.bytes || known != tt.known {
			t.Errorf("ParseConfigSize(%q) = %d, %v, %v; want %d, %v", tt.in, b, known, err, tt.bytes, tt.known)
		}
	}
	for _, in := range []string{"", "garbage", "-8G", "8 G"} {
		if _, known, err := ParseConfigSize(in); !errors.Is(err, ErrSyntax) || known {
			t.Errorf("ParseConfigSize(%q): known=%v err=%v; want a syntax error", in, known, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{8589934592, "8G"},
		{9126805504, "8704M"},
		{1000, "1000"},
		{0, "0T"}, // format_size(0) in Perl, as seen in "size=0T" configs
		{1, "1"},
		{1023, "1023"},
		{1024, "1K"},
		{1536, "1536"},
		{1025 * KiB, "1025K"},
		{MiB, "1M"},
		{1023 * MiB, "1023M"},
		{GiB, "1G"},
		{TiB, "1T"},
		{3 * TiB, "3T"},
		{1 << 50, "1024T"},
		{30 * GiB, "30G"},
		{math.MaxInt64, "9223372036854775807"},
		{-1024, "-1K"}, // Perl's int() truncates toward zero, and so does Go
		{-1, "-1"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.in); got != tt.want {
			t.Errorf("FormatSize(%d) = %q; want %q", tt.in, got, tt.want)
		}
		if tt.in >= 0 {
			if back, err := ParseSize(tt.want); err != nil || back != tt.in {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tt.in, back, err)
			}
		}
	}
}

func TestDisplayGiBUp(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{8*GiB + GiB/2, "9 GiB"},
		{8 * GiB, "8 GiB"},
		{8*GiB + 1, "9 GiB"},
		{8*GiB - 1, "8 GiB"},
		{16 * GiB, "16 GiB"},
		{1, "1 GiB"},
		{0, "0 GiB"},
		{-GiB / 2, "0 GiB"},
		{math.MaxInt64, "8589934592 GiB"},
	}
	for _, tt := range tests {
		if got := DisplayGiBUp(tt.in); got != tt.want {
			t.Errorf("DisplayGiBUp(%d) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseAllocGiB(t *testing.T) {
	tests := []struct {
		in      string
		storage string
		gib     float64
		ok      bool
	}{
		{"local-lvm:8", "local-lvm", 8, true},
		{"local-zfs:0.5", "local-zfs", 0.5, true},
		{"local:0", "local", 0, true},
		{"Local-LVM:8", "Local-LVM", 8, true}, // storage ids are case-insensitive
		{"local-lvm:8,mountoptions=noatime", "local-lvm", 8, true},
		{"volume=local-lvm:8,ro=1", "local-lvm", 8, true},
		{"8", "", 0, false},
		{"local-lvm:vm-5001-disk-0", "", 0, false},
		{"local-lvm:vm-5001-disk-0,size=8G", "", 0, false},
		{"local:5001/vm-5001-disk-0.raw", "", 0, false},
		{"local-lvm:8G", "", 0, false},
		{"local-lvm:-1", "", 0, false},
		{"local-lvm:+1", "", 0, false},
		{"local-lvm:8.", "", 0, false},
		{"local-lvm:.5", "", 0, false},
		{"local-lvm:1e3", "", 0, false},
		{"1local:8", "", 0, false},
		{"l:8", "", 0, false},
		{"local-:8", "", 0, false},
		{":8", "", 0, false},
		{"local-lvm:8,local-lvm:9", "", 0, false},
		{"local-lvm:8,volume=local-lvm:9", "", 0, false},
		{"/srv/data", "", 0, false},
		{"", "", 0, false},
		{"local-lvm:" + strings.Repeat("9", 400), "", 0, false},
	}
	for _, tt := range tests {
		s, g, ok := ParseAllocGiB(tt.in)
		if s != tt.storage || g != tt.gib || ok != tt.ok {
			t.Errorf("ParseAllocGiB(%q) = %q, %v, %v; want %q, %v, %v", tt.in, s, g, ok, tt.storage, tt.gib, tt.ok)
		}
	}
}

func TestParseResizeSize(t *testing.T) {
	tests := []struct {
		in    string
		grow  bool
		bytes int64
		err   error
	}{
		{"+10G", true, 10 * GiB, nil},
		{"40G", false, 40 * GiB, nil},
		{"1073741824", false, GiB, nil},
		{"+0.5G", true, GiB / 2, nil},
		{"+512M", true, 512 * MiB, nil},
		{"1T", false, TiB, nil},
		{"1.5", false, 1, nil},
		{"10GiB", false, 0, ErrSyntax}, // the resize pattern has no iB units
		{"-1G", false, 0, ErrSyntax},
		{"++1G", false, 0, ErrSyntax},
		{"+", false, 0, ErrSyntax},
		{"", false, 0, ErrSyntax},
		{"10g", false, 0, ErrSyntax},
		{"+10 G", false, 0, ErrSyntax},
		{"+8388608T", false, 0, ErrRange},
	}
	for _, tt := range tests {
		grow, b, err := ParseResizeSize(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ParseResizeSize(%q) = %v, %d, %v; want error %v", tt.in, grow, b, err, tt.err)
			}
			continue
		}
		if err != nil || grow != tt.grow || b != tt.bytes {
			t.Errorf("ParseResizeSize(%q) = %v, %d, %v; want %v, %d", tt.in, grow, b, err, tt.grow, tt.bytes)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := ParseSize(strings.Repeat("x", 500))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *ParseError", err)
	}
	if len(pe.Input) > maxQuoted+3 {
		t.Errorf("error input not shortened: %d bytes", len(pe.Input))
	}
	if !strings.HasPrefix(err.Error(), `parse size "xxx`) {
		t.Errorf("error text = %q", err.Error())
	}
}
