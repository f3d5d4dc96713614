package server

import (
	"reflect"
	"strings"
	"testing"

	"pvebill/modules/provision"
)

// quickSample uses every tag quickValid compiles.
type quickSample struct {
	ID    string   `json:"id" validate:"required,serviceid"`
	Host  string   `json:"host" validate:"omitempty,max=20,hostname_rfc1123"`
	Kind  string   `json:"kind" validate:"omitempty,oneof=container vm"`
	Pass  string   `json:"pass" validate:"omitempty,min=3,max=8"`
	Keys  []string `json:"keys" validate:"omitempty,max=2,dive,required,max=6"`
	Need  []string `json:"need" validate:"required,min=1"`
	Plain string   `json:"plain"`
}

func TestQuickValidTakesRequestBodies(t *testing.T) {
	for _, v := range []any{&provision.CreateRequest{}, &provision.SuspendRequest{}, &provision.ChangePlanRequest{}, &quickSample{}} {
		if p := quickPlanOf(reflectType(v)); !p.ok {
			t.Errorf("%T is left to the validator", v)
		}
	}
	ok := &provision.CreateRequest{ServiceID: "whmcs-1", Plan: "ct-small", Hostname: "web1.example.com", OS: "debian-12",
		RootPassword: "Sup3r-Secret", SSHKeys: []string{"ssh-ed25519 AAAA a@example"}}
	if !quickValid(ok) {
		t.Fatal("a valid create body was not accepted")
	}
	type withInt struct {
		N int `validate:"min=1"`
	}
	if quickValid(&withInt{N: 5}) {
		t.Fatal("a struct with an int field was checked by quickValid")
	}
}

func TestQuickValidAgreesWithValidator(t *testing.T) {
	for _, s := range quickSeeds() {
		checkQuick(t, s.id, s.host, s.kind, s.pass, s.keys, s.need)
	}
}

type quickSeed struct{ id, host, kind, pass, keys, need string }

func quickSeeds() []quickSeed {
	return []quickSeed{
		{"a", "", "", "", "", "x"}, {"", "", "", "", "", "x"}, {"a b", "", "", "", "", "x"}, {"a", "web1.example.com", "vm", "abc", "k1\nk2", "x"},
		{"a", "-bad", "", "", "", "x"}, {"a", strings.Repeat("h", 21), "", "", "", "x"}, {"a", "", "lxc", "", "", "x"},
		{"a", "", "", "ab", "", "x"}, {"a", "", "", "abcdefghi", "", "x"}, {"a", "", "", "äöü", "", "x"}, {"a", "", "", "", "k1\nk2\nk3", "x"},
		{"a", "", "", "", "\n", "x"}, {"a", "", "", "", "toolong", "x"}, {"a", "", "", "", "", ""}, {"a", "", "", "", "", "\x00nil"},
		{strings.Repeat("i", 65), "", "", "", "", "x"}, {"a", "", "container", "", "", "x"}, {"a", "", " vm", "", "", "x"},
	}
}

// FuzzQuickValid: whatever quickValid accepts, the validator accepts.
func FuzzQuickValid(f *testing.F) {
	for _, s := range quickSeeds() {
		f.Add(s.id, s.host, s.kind, s.pass, s.keys, s.need)
	}
	f.Fuzz(func(t *testing.T, id, host, kind, pass, keys, need string) {
		checkQuick(t, id, host, kind, pass, keys, need)
	})
}

// checkQuick builds a quickSample; a "\x00nil" list is a nil slice, else the list is split on
// newlines ("" is an empty, non-nil list).
func checkQuick(t *testing.T, id, host, kind, pass, keys, need string) {
	list := func(s string) []string {
		if s == "\x00nil" {
			return nil
		}
		if s == "" {
			return []string{}
		}
		return strings.Split(s, "\n")
	}
	v := &quickSample{ID: id, Host: host, Kind: kind, Pass: pass, Keys: list(keys), Need: list(need)}
	if quickValid(v) {
		if err := validate.Struct(v); err != nil {
			t.Fatalf("quickValid accepted %+v, the validator says %v", v, err)
		}
	}
	// CreateRequest itself, built from the same strings.
	c := &provision.CreateRequest{ServiceID: id, Plan: kind, GuestType: kind, Hostname: host, OS: pass, RootPassword: pass, SSHKeys: list(keys)}
	if quickValid(c) {
		if err := validate.Struct(c); err != nil {
			t.Fatalf("quickValid accepted %+v, the validator says %v", c, err)
		}
	}
}

func reflectType(v any) reflect.Type { return reflect.TypeOf(v).Elem() }
