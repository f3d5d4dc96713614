//go:build openapiclient

// Package pvebillclient is the Go client that oapi-codegen generates from openapi.yaml. This
// file is compiled with it (scripts/openapi-clients.sh, tag openapiclient) and uses what an
// integrator needs: the client type, the two headers every client must be able to send, the
// admin's `client` query parameter and the contract's own YAML text.
package pvebillclient

import (
	"context"
	"net/http"

	// The generated client's own imports, named here too so that go mod tidy in
	// scripts/openapi-clients keeps them (and their versions) in go.mod.
	_ "github.com/oapi-codegen/runtime"
	_ "go.yaml.in/yaml/v3"
)

// createAndRead creates a service with an Idempotency-Key and a language, reads another client's
// service as an admin, and fetches the contract.
func createAndRead(ctx context.Context, sign RequestEditorFn) (*http.Response, []byte, error) {
	c, err := NewClientWithResponses("http://127.0.0.1:8080", WithRequestEditorFn(sign))
	if err != nil {
		return nil, nil, err
	}
	key, lang := IdempotencyKey("order-1001"), AcceptLanguage("de")
	created, err := c.CreateServiceWithResponse(ctx, &CreateServiceParams{IdempotencyKey: &key, AcceptLanguage: &lang},
		CreateServiceJSONRequestBody{ServiceId: "svc-1", Plan: "ct-small", Hostname: "ct1", Os: "debian-12"})
	if err != nil {
		return nil, nil, err
	}
	owner := ClientQuery("whmcs")
	if _, err := c.GetServiceWithResponse(ctx, "svc-1", &GetServiceParams{Client: &owner, AcceptLanguage: &lang}); err != nil {
		return nil, nil, err
	}
	spec, err := c.GetOpenAPIWithResponse(ctx)
	if err != nil {
		return nil, nil, err
	}
	return created.HTTPResponse, spec.Body, nil
}
