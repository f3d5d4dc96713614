package i18n

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Keys that may legitimately read the same in another language (none today). Anything identical
// to English elsewhere is an untranslated entry.
var sameAsEnglishAllowed = map[string]bool{"console.title": true}

// consoleKeys are the texts of the console pages (modules/console, R41).
var consoleKeys = []string{"console.title", "console.connecting", "console.connected", "console.closed",
	"console.max_session", "console.service_changed", "console.failed", "console.gone_title", "console.gone_text",
	"console.unavailable_text", "console.session_limit_text"}

// capabilityReasonKeys are the catalog keys of the capability refusal reasons.
var capabilityReasonKeys = []string{
	"capability.not_yet_available", "capability.plan_suspends_by_stop",
	"capability.not_possible.pause", "capability.not_possible.hibernate",
	"capability.not_possible.iso_install", "capability.not_possible.pxe_boot",
	"capability.not_possible.firmware_selection", "capability.snapshots_off", "capability.storage_cannot_snapshot",
	"capability.storage_type_unknown",
}

var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

func placeholders(s string) []string {
	p := placeholderRE.FindAllString(s, -1)
	sort.Strings(p)
	return p
}

// R37/R25: every code, field code and blocker has a non-empty, translated message with the
// same placeholders in each of the nine languages.
func TestCatalogsComplete(t *testing.T) {
	var keys []string
	for _, c := range Codes {
		keys = append(keys, "error."+string(c))
	}
	for _, f := range FieldCodes {
		keys = append(keys, "field."+string(f))
	}
	for _, b := range []string{"guest_missing", "protection_enabled", "proxmox_lock", "backup_or_restore_running",
		"protected_backup_exists", "rootfs_would_shrink", "rootfs_size_unknown", "mount_unclassifiable", "reinstall_in_progress"} {
		keys = append(keys, "blocker."+b)
	}
	// R10: the reasons of the plan capabilities (modules/plans.ReasonKeys; that package's tests
	// check each of its keys in the nine catalogs too).
	keys = append(keys, capabilityReasonKeys...)
	keys = append(keys, consoleKeys...)
	if len(Languages) != 9 {
		t.Fatalf("%d languages", len(Languages))
	}
	for _, key := range keys {
		en, ok := Lookup("en", key)
		if !ok || strings.TrimSpace(en) == "" {
			t.Errorf("en: %s missing or empty", key)
			continue
		}
		for _, lang := range Languages[1:] {
			msg, ok := Lookup(lang, key)
			switch {
			case !ok:
				t.Errorf("%s: %s missing", lang, key)
			case strings.TrimSpace(msg) == "":
				t.Errorf("%s: %s empty", lang, key)
			case msg == en && !sameAsEnglishAllowed[key]:
				t.Errorf("%s: %s untranslated (identical to English)", lang, key)
			case strings.Join(placeholders(msg), ",") != strings.Join(placeholders(en), ","):
				t.Errorf("%s: %s placeholders %v, English has %v", lang, key, placeholders(msg), placeholders(en))
			}
		}
	}
	// No catalog carries keys English lacks (stale entries).
	for _, lang := range Languages[1:] {
		for _, k := range Keys(lang) {
			if _, ok := Lookup("en", k); !ok {
				t.Errorf("%s: stale key %s", lang, k)
			}
		}
	}
}

func TestNegotiate(t *testing.T) {
	cases := map[string]string{
		"":                          "en",
		"de":                        "de",
		"de-CH, en;q=0.5":           "de",
		"en;q=0.5, fr;q=0.9":        "fr",
		"ja, pt-BR;q=0.8":           "pt",
		"ja":                        "en",
		"*":                         "en",
		"tr;q=0, nl":                "nl",
		"PL":                        "pl",
		"it;q=abc, es;q=0.1":        "es",
		"  es ;  q=0.7 , it;q=0.7 ": "es",
	}
	for in, want := range cases {
		if got := Negotiate(in); got != want {
			t.Errorf("Negotiate(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTranslateFillsPlaceholdersAndFallsBack(t *testing.T) {
	got := T("de", "blocker.proxmox_lock", map[string]string{"lock": "backup"})
	if !strings.Contains(got, "backup") || strings.Contains(got, "{lock}") {
		t.Fatalf("%q", got)
	}
	if T("xx", "error.not_found", nil) != T("en", "error.not_found", nil) {
		t.Fatal("unknown language does not fall back to English")
	}
	if T("en", "no.such.key", nil) != "no.such.key" {
		t.Fatal("missing key")
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"de-CH, en;q=0.5", "", ";;;,,,", "q=1", "fr;q=0.9;x=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Negotiate(s)
		if _, ok := catalogs[l]; !ok {
			t.Fatalf("Negotiate(%q) = %q, not a catalog", s, l)
		}
	})
}
