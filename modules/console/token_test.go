package console

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// R41: A token carries its grant under a MAC: read back whole with the same secret, refused with
// another secret, refused when any character changes, and two tokens of one grant differ (a
// fresh nonce each).
func TestTokenRoundTripAndTampering(t *testing.T) {
	tk := NewTokens(strings.Repeat("s", 40))
	g := Grant{ServiceRef: 42, ClientID: "whmcs", Kind: KindVNC, Expires: time.Unix(1_900_000_000, 0)}
	tok, err := tk.Issue(&g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := tk.Parse(tok)
	if err != nil {
		t.Fatal(err)
	}
	if back != g {
		t.Fatalf("read back %+v, issued %+v", back, g)
	}
	if _, err := NewTokens(strings.Repeat("t", 40)).Parse(tok); !errors.Is(err, ErrBadToken) {
		t.Errorf("another secret: %v", err)
	}
	for i := range tok {
		c := byte('A')
		if tok[i] == 'A' {
			c = 'B'
		}
		bad := tok[:i] + string(c) + tok[i+1:]
		if _, err := tk.Parse(bad); err == nil {
			t.Fatalf("changed at %d: accepted", i)
		}
	}
	g2 := g
	tok2, _ := tk.Issue(&g2)
	if tok2 == tok || g2.Nonce == g.Nonce {
		t.Error("two tokens of one grant share their nonce")
	}
	for _, bad := range []string{"", "x", strings.Repeat("A", 600), tok[:len(tok)-2]} {
		if _, err := tk.Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
