package pveconf

import (
	"math"
	"strconv"
)

// Byte multiples used by Proxmox sizes; all are powers of 1024.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// maxFracDigits bounds the fraction digits that can change a result: a
// multiple of 2^-40 has at most 40 decimal places, so cutting a fraction
// after 40 digits never changes floor(fraction * 2^shift) for shift <= 40.
const maxFracDigits = 40

// decimal is a scanned \d+(\.\d+)? number.
type decimal struct {
	intPart string
	frac    string // digits after the point, "" when there is none
	hasFrac bool
}

// scanDecimal reads \d+(\.\d+)? from the start of s and returns the rest.
func scanDecimal(s string) (d decimal, rest string, ok bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return decimal{}, s, false
	}
	d.intPart = s[:i]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 {
			return decimal{}, s, false // "8." is not a Proxmox number
		}
		d.frac, d.hasFrac = s[i+1:j], true
		i = j
	}
	return d, s[i:], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scale returns floor(d * 2^shift), or ok=false when it exceeds MaxInt64.
func (d decimal) scale(shift uint) (int64, bool) {
	var n uint64
	for i := 0; i < len(d.intPart); i++ {
		c := uint64(d.intPart[i] - '0')
		if n > (math.MaxInt64-c)/10 {
			return 0, false
		}
		n = n*10 + c
	}
	if n > uint64(math.MaxInt64)>>shift {
		return 0, false
	}
	// n<<shift <= MaxInt64 - (2^shift - 1), so adding the fraction's part,
	// which is below 2^shift, cannot overflow.
	return int64(n<<shift) + fracBits(d.frac, shift), true
}

// fracBits returns floor(0.frac * 2^shift) exactly by doubling the decimal
// fraction shift times and collecting the carries.
func fracBits(frac string, shift uint) int64 {
	if shift == 0 || frac == "" {
		return 0
	}
	var digits [maxFracDigits]byte
	n := copy(digits[:], frac)
	for i := 0; i < n; i++ {
		digits[i] -= '0'
	}
	var r int64
	for range shift {
		var carry byte
		for j := n - 1; j >= 0; j-- {
			v := digits[j]*2 + carry
			digits[j], carry = v%10, v/10
		}
		r = r<<1 | int64(carry)
	}
	return r
}

// sizeShift maps a size suffix to its power of 1024.
func sizeShift(suffix string) (uint, bool) {
	switch suffix {
	case "":
		return 0, true
	case "K", "KiB":
		return 10, true
	case "M", "MiB":
		return 20, true
	case "G", "GiB":
		return 30, true
	case "T", "TiB":
		return 40, true
	}
	return 0, false
}

// parseSize parses a size as pve-common's parse_size does (the disk-size format of a config's
// size= option): \d+(\.\d+)? followed by nothing (bytes) or by K, M, G, T, KiB, MiB, GiB or
// TiB (powers of 1024), truncated to whole bytes. It refuses an empty string, a sign, spaces,
// lower-case or decimal (KB) units and anything above MaxInt64. It also returns the number and
// the unit text.
func parseSize(s string) (bytes int64, d decimal, unit string, err error) {
	if s == "" {
		return 0, d, "", syntaxErr("size", s, "empty")
	}
	d, unit, ok := scanDecimal(s)
	if !ok {
		return 0, d, "", syntaxErr("size", s, "want digits with an optional fraction")
	}
	shift, ok := sizeShift(unit)
	if !ok {
		return 0, d, "", syntaxErr("size", s, "unknown unit "+strconv.Quote(shorten(unit)))
	}
	b, ok := d.scale(shift)
	if !ok {
		return 0, d, "", rangeErr("size", s, "larger than an int64 byte count")
	}
	return b, d, unit, nil
}

// ParseConfigSize parses a config's size= value and says whether the byte
// count is known (R24). A value with a unit is known. A bare number
// is bytes, but Proxmox only writes a bare number for a size that is not a
// whole number of KiB: a bare non-zero multiple of 1024, or a bare number
// with a fraction, was written by someone else, may have meant KiB, and is
// returned with known=false (the caller refuses with rootfs_size_unknown).
// bytes is parseSize's reading either way.
func ParseConfigSize(s string) (bytes int64, known bool, err error) {
	b, d, unit, err := parseSize(s)
	switch {
	case err != nil:
		return 0, false, err
	case unit != "":
		return b, true, nil
	case d.hasFrac:
		return b, false, nil
	case b != 0 && b%KiB == 0:
		return b, false, nil
	}
	return b, true, nil
}

// GiBUp returns bytes in GiB rounded up: 8.5 GiB is 9, 8 GiB is 8 (R23).
func GiBUp(bytes int64) int64 {
	q := bytes / GiB
	if bytes%GiB > 0 {
		q++
	}
	return q
}

// DisplayGiBUp renders bytes for people, in GiB rounded up (R23):
// "9 GiB" for 8.5 GiB, "8 GiB" for exactly 8 GiB.
func DisplayGiBUp(bytes int64) string {
	return strconv.FormatInt(GiBUp(bytes), 10) + " GiB"
}
