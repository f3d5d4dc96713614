package pve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"pvebill/modules/pve/pvesim"
)

// TestSecretNeverInErrors drives every error path of the client, including a
// misbehaving server that echoes the Authorization header back, and checks
// that the token secret appears in no error string.
func TestSecretNeverInErrors(t *testing.T) {
	header := "PVEAPIToken=" + testTokenID + "=" + testSecret
	escaped := url.QueryEscape(header)
	var errs []error
	collect := func(err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("expected an error")
		}
		errs = append(errs, err)
	}
	ctx := testContext(t)

	// Echoing servers: message, errors map, reason phrase, undecodable data.
	echo := []*replay{
		{status: []int{500}, body: []string{pveError("bad header " + header)}},
		{status: []int{500}, body: []string{pveError("bad header " + escaped)}},
		{status: []int{400}, body: []string{fmt.Sprintf(`{"data":null,"message":"x","errors":{"auth":%q}}`, header)}},
		{status: []int{401}, body: []string{""}, reason: "token " + testSecret + " refused"},
		{status: []int{200}, body: []string{fmt.Sprintf(`{"data":%q}`, testSecret)}},
		{status: []int{596}, body: []string{pveError("proxy " + header)}},
	}
	for _, rp := range echo {
		srv := httptest.NewServer(rp)
		c := newTestClient(t, testConfig(srv.URL), nil)
		var id Int
		collect(c.DoRequest(ctx, "POST", "/cluster/nextid", nil, &id))
		srv.Close()
	}

	// The simulator with a different secret: 401.
	sim := pvesim.New(pvesim.Options{TokenID: testTokenID, TokenSecret: "another-secret"})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := newTestClient(t, testConfig(srv.URL), nil)
	_, err := c.Nodes(ctx)
	if !isKind(err, ErrAuth) {
		t.Errorf("wrong secret: %v", err)
	}
	collect(err)

	// The simulator with the right secret: refusals and a failed task whose
	// exit status and log carry the secret.
	sim, c = newSim(t)
	_, err = c.Node("pve1").LXC(200).Start(ctx)
	collect(err) // already running
	_, err = c.Node("pve1").LXC(4242).Config(ctx)
	collect(err) // not found
	sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/stop", Nth: 1,
		TaskFail: "leaked " + header})
	_, err = c.Node("pve1").LXC(200).Stop(ctx)
	var te *TaskError
	if !errors.As(err, &te) {
		t.Fatalf("task failure: %v", err)
	}
	collect(err)
	for _, l := range te.Result.LogTail {
		if strings.Contains(l, testSecret) {
			t.Errorf("log tail line carries the secret: %q", l)
		}
	}

	// Network failures: refused, dropped, TLS, deadline.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	collect(newTestClient(t, testConfig("http://"+addr), nil).DoRequest(ctx, "GET", "/nodes", nil, nil))
	u, _ := dropServer(t)
	collect(newTestClient(t, testConfig(u), nil).DoRequest(ctx, "POST", "/nodes/pve1/lxc", nil, nil))
	tlsSrv := httptest.NewUnstartedServer(&replay{status: []int{200}, body: []string{`{"data":null}`}})
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	collect(newTestClient(t, testConfig(tlsSrv.URL), nil).DoRequest(ctx, "GET", "/nodes", nil, nil))
	slow := httptest.NewServer(&replay{status: []int{503}, body: []string{""}})
	defer slow.Close()
	cfg := testConfig(slow.URL)
	cfg.RetryBaseDelay, cfg.RetryMaxDelay = time.Hour, time.Hour
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	collect(newTestClient(t, cfg, nil).DoRequest(dctx, "GET", "/nodes", nil, nil))

	// Config validation.
	for _, bad := range []Config{
		{URL: "https://pve:8006", TokenID: testTokenID, TokenSecret: testSecret + "\n"},
		{URL: "https://pve:8006", TokenID: testTokenID, TokenSecret: testSecret, Fingerprint: testSecret},
		{URL: "https://" + testSecret + ":x@pve", TokenID: testTokenID, TokenSecret: testSecret},
	} {
		_, err := New(bad, nil)
		collect(err)
	}

	for _, err := range errs {
		for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(s, testSecret) {
				t.Errorf("secret in error: %s", s)
			}
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			if s := fmt.Sprintf("%+v", *apiErr); strings.Contains(s, testSecret) {
				t.Errorf("secret in APIError fields: %s", s)
			}
		}
	}
	if len(errs) != 17 {
		t.Errorf("only %d error paths exercised", len(errs))
	}
}
