// Package lxc is the container module: the short create body (R5–R7), the ownership stamp
// (R39), anti-spoofing (R9), suspend by stopping with onboot=0 and never status/suspend (R15),
// destroy with purge and destroy-unreferenced-disks (R17), and monitoring where every field a
// container lacks stays null (R14). Its vocabulary is the container's own (R12): ostemplate,
// rootfs, swap, unprivileged.
//
// Everything container-specific lives here, each capability in its own file (reinstall.go);
// nothing of the VM's and nothing of a flow's bookkeeping (operations, intents) belongs here.
package lxc
