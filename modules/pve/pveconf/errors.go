package pveconf

import (
	"errors"
	"fmt"
)

var (
	// ErrSyntax is wrapped by every error for input that does not follow
	// the Proxmox syntax of the value being parsed.
	ErrSyntax = errors.New("invalid syntax")
	// ErrRange is wrapped by errors for well-formed numbers that do not fit
	// (an int64 byte count, a VLAN tag, an MTU).
	ErrRange = errors.New("value out of range")
)

// ParseError describes a value that could not be parsed.
type ParseError struct {
	What  string // the kind of value: "size", "volume", "mount point", ...
	Input string // the input, shortened to maxQuoted bytes
	Msg   string // what is wrong with it
	Err   error  // ErrSyntax or ErrRange
}

const maxQuoted = 80

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse %s %q: %s", e.What, e.Input, e.Msg)
}

// Unwrap returns ErrSyntax or ErrRange.
func (e *ParseError) Unwrap() error { return e.Err }

func shorten(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return s[:maxQuoted] + "..."
}

func syntaxErr(what, input, msg string) error {
	return &ParseError{What: what, Input: shorten(input), Msg: msg, Err: ErrSyntax}
}

func rangeErr(what, input, msg string) error {
	return &ParseError{What: what, Input: shorten(input), Msg: msg, Err: ErrRange}
}
