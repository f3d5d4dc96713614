package config

import (
	"errors"
	"strings"
	"testing"
)

const withCallback = `
listen: "127.0.0.1:9090"
database:
  driver: sqlite
  dsn: "pvebill.db"
clients:
  - id: whmcs
    secret: "test-client-secret-0123456789abcdef"
    scopes: [billing]
    callback_url: "https://billing.example.com/modules/servers/pvebill/callback.php?x=1"
    callback_secret: "callback-secret-0123456789"
`

func TestCallbackKeys(t *testing.T) {
	cfg, err := Load(write(t, withCallback), []string{"PVEBILL_CLIENTS_0_CALLBACK_SECRET=from-env-callback-secret"})
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Clients[0]
	if cl.CallbackURL != "https://billing.example.com/modules/servers/pvebill/callback.php?x=1" || cl.CallbackSecret != "from-env-callback-secret" {
		t.Fatalf("%+v", cl)
	}
	if s := cfg.String(); strings.Contains(s, "from-env-callback-secret") || !strings.Contains(s, "billing.example.com") {
		t.Fatalf("String() must redact the callback secret and keep the URL:\n%s", s)
	}
}

func TestCallbackErrorsNameTheKey(t *testing.T) {
	cases := []struct{ name, body, key string }{
		{"secret without url", strings.Replace(withCallback, `    callback_url: "https://billing.example.com/modules/servers/pvebill/callback.php?x=1"`+"\n", "", 1), "clients[0].callback_url"},
		{"relative url", strings.Replace(withCallback, "https://billing.example.com", "/billing", 1), "clients[0].callback_url"},
		{"ftp url", strings.Replace(withCallback, "https://", "ftp://", 1), "clients[0].callback_url"},
		{"short secret", strings.Replace(withCallback, "callback-secret-0123456789", "short", 1), "clients[0].callback_secret"},
		{"placeholder secret", strings.Replace(withCallback, "callback-secret-0123456789", "CHANGE-ME-callback-secret-0123456789", 1), "clients[0].callback_secret"},
		{"url without secret", strings.Replace(withCallback, `    callback_secret: "callback-secret-0123456789"`+"\n", "", 1), "clients[0].callback_secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, c.body), nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("err = %v, want key %s", err, c.key)
			}
		})
	}
}
