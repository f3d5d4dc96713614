// Package server is pvebill's HTTP layer: routing, request signing, idempotency, validation,
// problem+json mapping and long-polling. Handlers stay thin and call the domain in modules/.
package server
