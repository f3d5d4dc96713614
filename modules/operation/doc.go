// Package operation holds the plumbing the operations of provision and reinstall share — the
// one cluster table, the ownership refusal (R39), the Proxmox-error mapping, the blocker codes
// and the recording of a service's state — and nothing kind-specific or flow-specific.
package operation
