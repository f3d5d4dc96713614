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
