// Package simtest starts the Proxmox VE simulator for tests of any package and checks, when the
// test ends, the facts every test must keep: no request Proxmox's schema refuses (the client
// never sends a parameter Proxmox does not define), and no QEMU-only path or container
// status/suspend ever sent for a container (R13, R15).
package simtest
