package pveconf

import (
	"slices"
	"strings"
	"unicode"
)

// NormalizeTags splits a tags value the way Proxmox does (pve-common
// split_list, pve-guest-common get_unique_tags with the default tag style):
// on ";", "," and white space; lower-cased; duplicates dropped; sorted. It
// returns nil when there is no tag. It does not check the characters.
func NormalizeTags(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ';' || r == ',' || unicode.IsSpace(r)
	})
	if len(fields) == 0 {
		return nil
	}
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// JoinTags normalizes tags (each element may itself hold several) and
// joins them with ";", the form Proxmox stores.
func JoinTags(tags []string) string {
	return strings.Join(NormalizeTags(strings.Join(tags, ";")), ";")
}
