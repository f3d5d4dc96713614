// Package password changes a service's root password after create (R56): through the QEMU
// guest agent of a VM (kinds.PasswordSetter), refused permanently for a kind that cannot
// (a container), refused temporarily when the agent does not answer. The password is transient
// (R26): it lives in the executor's in-memory secrets of the replica that accepted the request,
// never in the operation's payload, a table or a log line.
//
// The operation `password` is two stages: precheck (the password is still held, the guest is
// the service's and its agent answers) and set_password (one set-user-password call). When the
// replica holding the password is gone, the replica that takes the operation over fails it
// operation_interrupted before it sends anything; the billing system asks again.
package password
