package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/server/config"
)

// Two replicas over one database and one cluster (R41): a URL handed out by replica A opens on
// replica B, whose relay reaches the guest; the same URL opened again on A is 410
// console_expired; a suspend run by A's executor ends B's session within B's re-check (B got no
// in-process signal), with close code 4001.
func TestConsoleAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbA, dbB := replicaDatabases(t, d)
			sim := simtest.Start(t, nil)
			cc := &config.Console{Secret: consoleSecret}
			a := newServicesReplica(t, dbA, sim, cc, "replica-a", true)
			b := newServicesReplica(t, dbB, sim, cc, "replica-b", false)
			// Every operation runs on A: B's executor, and with it B's in-process signal, is off.
			sctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			b.exec.Stop(sctx)
			cancel()
			succeeded(t, a.billing("POST", "/v1/services?wait=20", createBody("rep-ct", "ct-1g")))
			url := a.openConsole(t, "rep-ct", "", "terminal")
			onB := b.http.URL + url[strings.Index(url, "/console/"):]
			c, _, err := dialConsole(t, onB)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.CloseNow() }()
			readUntil(t, c, ":~# ")
			if _, resp, err := dialConsole(t, url); err == nil || resp == nil || resp.StatusCode != http.StatusGone {
				t.Fatalf("the URL opened again on replica A: %v %v", resp, err)
			}
			start := time.Now()
			r := a.billing("POST", "/v1/services/rep-ct/suspend?wait=20", nil)
			if r.Status != http.StatusOK {
				t.Fatalf("suspend on A: %d %s", r.Status, r.Body)
			}
			if code := waitClose(t, c, 6*time.Second); code != 4001 {
				t.Fatalf("close code %d, want 4001", code)
			}
			t.Logf("B's session ended %s after the suspend was asked of A", time.Since(start).Round(time.Millisecond))
			if v := waitMetric(t, b.reg, "pvebill_console_sessions_ended_total", "reason", "service_changed", 1); v != 1 {
				t.Errorf("B ended{service_changed} %v", v)
			}
		})
	}
}
