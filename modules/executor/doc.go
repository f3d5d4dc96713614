// Package executor runs operations: workers claim queued rows from the operations table (on
// MySQL with SELECT … FOR UPDATE SKIP LOCKED and a lease renewed by a heartbeat), run the
// action's ordered stages while recording each stage on the row before it runs, and finish the
// row. Only one operation per service runs at a time (the service lock on the services row).
// An action is a list of named stages (Stage, Step); nothing about guests or services lives
// here.
//
// State machine of an operation:
//
//	queued ──claim──▶ running ──▶ succeeded
//	   ▲                 │  └───▶ failed                (failure before the irreversible stage)
//	   └──release────────┤  └───▶ needs_reconciliation  (failure at or after it; lock stays closed)
//	                     └─lease expired─▶ taken over: resumed, or needs_reconciliation when the
//	                                        irreversible stage had begun (R38)
package executor
