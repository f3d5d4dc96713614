package server_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

// webhookServer is the server of the webhook path as the bench wires it: every route and
// middleware, a JSON logger, the executor built but not started (a create stays queued).
func webhookServer(b *testing.B) *server.Server {
	b.Helper()
	ds := dbtest.Dialects(b)
	db := dbtest.Open(b, ds[len(ds)-1])
	sim := simtest.Start(b, nil)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	client, err := pve.New(pve.Config{Cluster: "default", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(client.Close)
	st := stack.New(stack.Options{DB: db, Log: log, Metrics: reg, Kinds: stack.Kinds(),
		Clusters: []kinds.Cluster{{Name: "default", Client: client}},
		Executor: executor.Config{Owner: "bench", Workers: 1, Lease: 30 * time.Second, PollInterval: time.Second}})
	if _, err := st.Plans.Import(b.Context(), lifecyclePlans(), plans.SourceFile); err != nil {
		b.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Clients = []config.Client{{ID: "whmcs", Secret: billingSecret, Scopes: []string{"billing"}}}
	srv := server.New(serve.Options(st, cfg))
	srv.V1("billing").POST("/_bench/validate", func(c *gin.Context) {
		var req provision.CreateRequest
		if err := server.BindJSON(c, &req); err != nil {
			srv.WriteError(c, err)
			return
		}
		c.Status(http.StatusNoContent)
	})
	return srv
}

func benchSigned(method, path string, body []byte) *http.Request {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	sign(req, "whmcs", billingSecret, time.Now(), body)
	return req
}

func serveOnce(b *testing.B, srv *server.Server, req *http.Request, want int) {
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, w.Code, w.Body)
	}
}

// BenchmarkWebhook is the server side of the bench's webhook scenario without the network: a
// signed create with an Idempotency-Key, a signed service read, and the signature check plus
// validation alone (requests are built before the timer starts).
func BenchmarkWebhook(b *testing.B) {
	srv := webhookServer(b)
	run := func(b *testing.B, want int, mk func(i int) *http.Request) {
		reqs := make([]*http.Request, b.N)
		for i := range reqs {
			reqs[i] = mk(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for _, req := range reqs {
			serveOnce(b, srv, req, want)
		}
	}
	b.Run("validate", func(b *testing.B) {
		body := createBody("validate-only", "ct-1g")
		run(b, http.StatusNoContent, func(int) *http.Request {
			return benchSigned(http.MethodPost, "/v1/_bench/validate", body)
		})
	})
	n := 0
	b.Run("create", func(b *testing.B) {
		run(b, http.StatusAccepted, func(int) *http.Request {
			id := fmt.Sprintf("bench-%07d", n)
			n++
			req := benchSigned(http.MethodPost, "/v1/services", createBody(id, "ct-1g"))
			req.Header.Set("Idempotency-Key", "create-"+id)
			return req
		})
	})
	if n == 0 {
		return
	}
	b.Run("get", func(b *testing.B) {
		run(b, http.StatusOK, func(i int) *http.Request {
			return benchSigned(http.MethodGet, fmt.Sprintf("/v1/services/bench-%07d", i%n), nil)
		})
	})
}
