// Package pveconf parses and writes the small string formats found in
// Proxmox VE guest configurations and API answers: disk sizes, volume ids,
// container mount points, network interface strings, task ids (UPIDs) and
// tags.
//
// Every parser follows the Proxmox Perl code it mirrors (named on each
// function) and returns an error wrapping [ErrSyntax] or [ErrRange] for input
// Proxmox would not have produced or accepted. Parsers never panic, whatever
// the input; they are fuzzed for that and for their round-trip properties.
//
// # Sizes (R23, R24 in docs/design.md)
//
// [ParseConfigSize] reads a config's size= value as pve-common's parse_size
// does: an optional fraction and a unit K, M, G or T, all powers of 1024; a
// bare number is bytes. It also takes KiB, MiB, GiB and TiB as R24 asks,
// which the pve-common parse_size read for this package does not: that only
// widens what we read, and Proxmox itself writes K, M, G and T
// (format_size: the largest exact unit). Proxmox computes the product in
// floating point and truncates; this package computes it exactly and
// truncates, which only differs for inputs with more significant digits
// than a float64 holds, and Proxmox never writes such a value.
//
// It adds the product rule for a config's size= option: Proxmox writes a
// bare number only for a size that is not a whole number of KiB, so a bare
// multiple of 1024 (and a bare number with a fraction) was written by
// someone else, who may have meant KiB, and is reported as not known. A
// bare 0 is 0 either way and is known.
//
// # Volume ids (R21 in docs/design.md)
//
// [ParseVolume] reads the owner of a volume from its name the way the
// storage plugins' parse_volname does. The storage's plugin type cannot be
// known from the id alone, so the shape of the name decides:
//
//   - a leading absolute path: /dev/... is a device mount, any other path a
//     bind mount (pve-container classify_mountpoint);
//   - NNN/file or NNN/basefile/NNN/file: directory-style images (dir, NFS,
//     CIFS, CephFS, btrfs); the owner is the directory number, the file must
//     carry a .raw, .qcow2, .vmdk or .subvol extension;
//   - iso/, vztmpl/, backup/, snippets/, import/, rootdir/: the other
//     directory-style content types; backup/(vm|ct|host)/ID/TIME is a Proxmox
//     Backup Server snapshot;
//   - vm-N-..., base-N-..., subvol-N-..., basevol-N-..., optionally after a
//     base-N-.../ linked-clone prefix: block-style volumes (LVM, LVM-thin,
//     ZFS, RBD); the owner is N of the last component. Such a name ending in
//     .raw, .vmdk or .subvol is refused: block plugins never create one, and a
//     directory storage cannot parse it.
//
// Anything else is an error, which the caller labels unknown.
//
// # Mount points, networks, UPIDs and tags
//
// [ParseMountPoint] reads rootfs, mpN and unusedN values; [FormatRootfsAlloc]
// writes the only rootfs form used on create, the STORAGE:GiB allocation.
// [ParseNet] reads container and QEMU netN values; [FormatLXCNet] builds a
// validated container netN for create. [ParseUPID] decodes a task id (pve-common
// PVE::UPID); the client reads task nodes and types with it. [NormalizeTags]
// and [JoinTags] follow get_unique_tags.
//
// The package imports nothing of pvebill: it is shared by the client and the
// guest modules, and the simulator deliberately keeps its own parsers.
package pveconf
