package stacktest

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
)

// Client is the billing client the environment's services belong to.
const Client = "whmcs"

// Password is the root password of ContainerRequest: long and mixed enough for the plans'
// password rules.
const Password = "Sup3r-Secret-Root-pw"

// ContainerRequest is a create of service id on the standard container plan (ct-small), with a
// password and a key.
func ContainerRequest(id string) provision.CreateRequest {
	return provision.CreateRequest{ServiceID: id, Plan: "ct-small", Hostname: "web1.example.com", OS: "debian-12",
		RootPassword: Password, SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a test@example"}}
}

// Request is ContainerRequest on another plan (a VM's, say).
func Request(id, plan string) provision.CreateRequest {
	r := ContainerRequest(id)
	r.Plan = plan
	return r
}

// Create creates the service for Client and waits until the create has succeeded.
func (e *Env) Create(req provision.CreateRequest) *models.Operation {
	e.T.Helper()
	op, _, err := e.Stack.Provisioner.Create(e.T.Context(), Client, req)
	return e.MustSucceed(op, err)
}

// Service reads Client's service id.
func (e *Env) Service(id string) *models.Service {
	e.T.Helper()
	s, err := e.DB.GetService(e.T.Context(), models.ServiceKey{ClientID: Client, ServiceID: id})
	if err != nil {
		e.T.Fatal(err)
	}
	return s
}

// PostsSince returns the simulator's POST requests after the first n requests of its log.
func (e *Env) PostsSince(n int) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range e.Sim.Requests()[n:] {
		if r.Method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

// Operations is how many operations the database holds.
func (e *Env) Operations() int64 {
	e.T.Helper()
	return dbtest.Count(e.T, e.DB, "SELECT COUNT(*) FROM operations")
}

// ResultOf is an operation's result document (empty when it has none).
func ResultOf(t testing.TB, op *models.Operation) map[string]any {
	t.Helper()
	m := map[string]any{}
	if op.Result != nil {
		if err := json.Unmarshal([]byte(*op.Result), &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// IsCode reports whether err is the problem code with the HTTP status.
func IsCode(err error, code i18n.Code, status int) bool {
	var p *i18n.Problem
	return errors.As(err, &p) && p.Code == code && p.Status == status
}
