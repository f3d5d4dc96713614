package pve

import (
	"fmt"
	"net/url"
	"strings"
)

// Helpers only the tests use: production builds request structs with its own values and never
// reads sshkeys back.

// Ptr returns a pointer to v, for the optional fields of request structs:
// LXCCreateRequest{Swap: pve.Ptr(0)} sends swap=0.
func Ptr[T any](v T) *T { return &v }

// DecodeSSHKeys reverses EncodeSSHKeys for a value read from the config.
func DecodeSSHKeys(s string) ([]string, error) {
	plain, err := url.PathUnescape(s)
	if err != nil {
		return nil, fmt.Errorf("pve: decode sshkeys: %w", err)
	}
	var out []string
	for _, line := range strings.Split(plain, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}
