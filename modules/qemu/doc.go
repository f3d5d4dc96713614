// Package qemu is the VM module: a VM is a clone of the plan's template (full unless the plan
// says linked) configured through cloud-init, its boot disk grown to the plan size (R8), its
// ipfilter-net0 ipset filled before ipfilter is enabled (R9), suspended by the plan's mode
// (stop or pause, R15) and destroyed with purge and destroy-unreferenced-disks (R17). Its
// vocabulary is the VM's own (R12): clone, scsi0, cloud-init.
//
// Everything VM-specific lives here, each capability in its own file (clone.go, suspend.go,
// reinstall.go); nothing of the container's and nothing of a flow's bookkeeping (operations,
// intents) belongs here.
package qemu
