// Package migrate moves a service's guest to another node of its cluster (R53), one operation
// `migrate` per guest, and puts nodes into maintenance (R52), where a drain queues such an
// operation for every service on the node.
//
// The operation is three stages: precheck (the guest is the service's, R39, its kind can move,
// and Proxmox names no blocker: a VM's local devices or a local ISO are migration_refused,
// permanent, with Proxmox's words as the reason), migrate (the target chosen as a create's
// placement chooses, unless the request named one; a VM online with its local disks, a container
// in restart mode; Proxmox's task waited for), and record_node (the service's node read back from
// where the guest is). A migration holds its source node's gate, so a node sends one guest away
// at a time across every replica. Nothing in it destroys: a failure leaves the guest running
// where Proxmox left it, and a run taken over after the move finds the guest already gone from
// its source and only records where it is.
package migrate
