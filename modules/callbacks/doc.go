// Package callbacks tells billing systems when their operations end.
//
// A client with a callback URL (clients[].callback_url and callback_secret in the config) gets
// one signed POST per operation that reaches a terminal state (succeeded, failed or
// needs_reconciliation). The flow, all of it driven by rows so that a restart loses nothing:
//
//	operation finished ──sweep──▶ callback_deliveries row (pending, unique per operation end)
//	                                  │ claim (lease)
//	                                  ▼
//	                              POST, signed ──2xx──▶ delivered
//	                                  │ otherwise
//	                                  ▼
//	                              pending again, next attempt after a growing backoff
//	                                  │ 24 h after the row was written
//	                                  ▼
//	                               expired
//
// The sweep finds finished operations without a delivery row, so an operation that ended just
// before a crash, or on another replica, is still announced. Delivery is at-least-once: the
// event id (the row's id, also in the X-Pvebill-Event-Id header) lets the receiver drop a
// repeat. The body is fixed when the row is written and identical on every attempt; the
// signature is the API's own scheme (HMAC-SHA256 over timestamp, method, request URI and
// body) with the callback secret, computed afresh per attempt.
//
// It reads operations through models and talks only to billing systems: nothing here calls
// Proxmox or changes an operation.
package callbacks
