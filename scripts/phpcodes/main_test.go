package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"pvebill/i18n"
)

const phpFile = "../../whmcs/modules/servers/pvebill/lib/ErrorCode.php"

// The committed PHP constants are what the generator writes from today's list of codes.
func TestPHPCodesUpToDate(t *testing.T) {
	got, err := os.ReadFile(phpFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := render(i18n.Codes); !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with i18n.Codes: run `go generate ./scripts/phpcodes`\nwant:\n%s", phpFile, want)
	}
}

// Every code becomes exactly one constant whose value is the code itself.
func TestRenderOneConstantPerCode(t *testing.T) {
	src := string(render(i18n.Codes))
	consts := regexp.MustCompile(`public const ([A-Z0-9_]+) = '([a-z0-9_]+)';`).FindAllStringSubmatch(src, -1)
	if len(consts) != len(i18n.Codes) {
		t.Fatalf("%d constants for %d codes", len(consts), len(i18n.Codes))
	}
	for i, m := range consts {
		if m[2] != string(i18n.Codes[i]) || m[1] != strings.ToUpper(m[2]) {
			t.Errorf("constant %d: %s = %q, want the code %q", i, m[1], m[2], i18n.Codes[i])
		}
	}
	if !strings.Contains(src, "IDEMPOTENCY_KEY_IN_PROGRESS = 'idempotency_key_in_progress'") {
		t.Error("the in-flight key code is missing")
	}
}
