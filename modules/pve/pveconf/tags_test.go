package pveconf

import (
	"slices"
	"testing"
)

func TestNormalizeTags(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"tag1;tag2", []string{"tag1", "tag2"}},
		{"B,a a;;  c", []string{"a", "b", "c"}},
		{"web prod\tWEB\ndb", []string{"db", "prod", "web"}},
		{"Prod;prod;PROD", []string{"prod"}},
		{"", nil},
		{" ; , ", nil},
	}
	for _, tt := range tests {
		if got := NormalizeTags(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("NormalizeTags(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestJoinTags(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"Web", "db;web"}, "db;web"},
		{[]string{"b", "a"}, "a;b"},
		{[]string{"x y", "z,x"}, "x;y;z"},
		{nil, ""},
		{[]string{"", " "}, ""},
	}
	for _, tt := range tests {
		if got := JoinTags(tt.in); got != tt.want {
			t.Errorf("JoinTags(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
