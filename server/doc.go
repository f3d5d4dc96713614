// Package server is pvebill's HTTP layer: routing, request signing, idempotency, strict input
// decoding and validation, problem+json mapping, metrics and long-polling. Handlers stay thin:
// they bind the request, call a service of modules/ (plans, provision, reinstall, ippool, usage)
// and map the result.
//
// What must not live here: Proxmox. server does not import modules/pve (nor a guest module);
// everything that talks to a cluster sits behind the services it is given, all of them
// required by New. An API client here is an APIClient (a signing key and its scopes), never a
// Proxmox client.
package server
