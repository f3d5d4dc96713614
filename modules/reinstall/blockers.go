package reinstall

import (
	"time"

	"pvebill/i18n"
	"pvebill/modules/operation"
	"pvebill/modules/pve/pveconf"
)

// BlockerCode names one of the nine reasons a reinstall is refused before anything
// irreversible happens (R25): the one blocker type of every operation.
type BlockerCode = operation.BlockerCode

// The nine blockers (R25).
const (
	GuestMissing           = operation.GuestMissing
	ProtectionEnabled      = operation.ProtectionEnabled
	ProxmoxLock            = operation.ProxmoxLock
	BackupOrRestoreRunning = operation.BackupOrRestoreRunning
	ProtectedBackupExists  = operation.ProtectedBackupExists
	RootfsWouldShrink      = operation.RootfsWouldShrink
	RootfsSizeUnknown      = operation.RootfsSizeUnknown
	MountUnclassifiable    = operation.MountUnclassifiable
	ReinstallInProgress    = operation.ReinstallInProgress
)

// Blocker is one typed refusal with the parameters its phrase needs.
type Blocker struct {
	Code   BlockerCode       `json:"code"`
	Params map[string]string `json:"params,omitempty"`
}

// I18n is the blocker as the problem layer carries it.
func (b Blocker) I18n() i18n.Blocker { return b.Code.Blocker(b.Params) }

// Message is the blocker's phrase in lang.
func (b Blocker) Message(lang string) string { return b.I18n().Message(lang) }

// Facts is everything the nine checks look at. The same function judges them at preview, at
// apply and in the executor; only where the facts come from differs.
type Facts struct {
	// Exists is false when no guest is at the vmid (the other fields are then ignored).
	Exists    bool
	Protected bool
	// Lock is the Proxmox lock on the guest ("" when none).
	Lock string
	// OwnBackupOrRestore is true while one of our own backup or restore operations of the
	// service is queued or running.
	OwnBackupOrRestore bool
	// ProtectedBackup is true when a backup of the guest on a backup storage is protected.
	ProtectedBackup bool
	// Mounts are the labelled mounts of the config (active and pending): a container's rootfs,
	// mpN and unusedN, or a VM's disks and unusedN.
	Mounts []Mount
	// RootKey names the mount whose size may only grow, as the kind names it: a container's
	// rootfs, a VM's boot disk.
	RootKey string
	// NoRoot is set when the guest has no such mount (a VM without a boot disk): there is no
	// size to compare and nothing missing, so neither raises a blocker (R24, R25).
	NoRoot bool
	// PlannedBytes is the root filesystem size of the plan.
	PlannedBytes int64
	// ReinstallInProgress is true while another reinstall of the service is applying.
	ReinstallInProgress bool
	// Snapshots are the guest's snapshots, which the destroy erases with its volumes (R44).
	Snapshots []Snapshot
}

// RootfsSizes are the current and planned root filesystem sizes: bytes compared, GiB rounded up
// for people (R23). CurrentBytes is nil when the size is missing or cannot be read (never 0).
type RootfsSizes struct {
	CurrentBytes   *int64 `json:"current_bytes"`
	CurrentDisplay string `json:"current_display"`
	PlannedBytes   int64  `json:"planned_bytes"`
	PlannedDisplay string `json:"planned_display"`
}

// SizesOf reads the current size of the mount named key from the labelled mounts (a container's
// rootfs, a VM's boot disk: size= of the active mount, read by pveconf.ParseConfigSize: a bare
// number is bytes, and one Proxmox would not have written is not known, R24).
func SizesOf(mounts []Mount, key string, plannedBytes int64) RootfsSizes {
	out := RootfsSizes{PlannedBytes: plannedBytes, PlannedDisplay: pveconf.DisplayGiBUp(plannedBytes), CurrentDisplay: "unknown"}
	if rf, ok := rootOf(mounts, key); ok && rf.SizeBytes != nil {
		b := *rf.SizeBytes
		out.CurrentBytes = &b
		out.CurrentDisplay = pveconf.DisplayGiBUp(b)
	}
	return out
}

// Check returns the blockers the facts raise, in operation.BlockerCodes order; none means the reinstall
// may go on. The root filesystem may only grow: it is refused when the current size in bytes is
// above the plan's, and shown rounded up (8.5 GiB against 8 reads "9 GiB" > "8 GiB").
func Check(f Facts) []Blocker {
	if !f.Exists {
		out := []Blocker{{Code: GuestMissing}}
		if f.OwnBackupOrRestore {
			out = append(out, Blocker{Code: BackupOrRestoreRunning})
		}
		if f.ReinstallInProgress {
			out = append(out, Blocker{Code: ReinstallInProgress})
		}
		return out
	}
	var out []Blocker
	if f.Protected {
		out = append(out, Blocker{Code: ProtectionEnabled})
	}
	if f.Lock != "" {
		out = append(out, Blocker{Code: ProxmoxLock, Params: map[string]string{"lock": f.Lock}})
	}
	if f.OwnBackupOrRestore {
		out = append(out, Blocker{Code: BackupOrRestoreRunning})
	}
	if f.ProtectedBackup {
		out = append(out, Blocker{Code: ProtectedBackupExists})
	}
	if !f.NoRoot {
		out = append(out, sizeBlockers(f.Mounts, f.RootKey, f.PlannedBytes)...)
	}
	for _, m := range f.Mounts {
		if m.Data == Unknown {
			out = append(out, Blocker{Code: MountUnclassifiable, Params: map[string]string{"key": m.Key}})
		}
	}
	if _, ok := rootOf(f.Mounts, f.RootKey); !ok && !f.NoRoot {
		out = append(out, Blocker{Code: MountUnclassifiable, Params: map[string]string{"key": f.RootKey}})
	}
	if f.ReinstallInProgress {
		out = append(out, Blocker{Code: ReinstallInProgress})
	}
	return out
}

// sizeBlockers are the size blockers of the mount named root: its size unknown, or above the
// plan's.
func sizeBlockers(mounts []Mount, root string, plannedBytes int64) []Blocker {
	sz := SizesOf(mounts, root, plannedBytes)
	switch {
	case sz.CurrentBytes == nil:
		return []Blocker{{Code: RootfsSizeUnknown}}
	case *sz.CurrentBytes > plannedBytes:
		return []Blocker{{Code: RootfsWouldShrink,
			Params: map[string]string{"current": sz.CurrentDisplay, "planned": sz.PlannedDisplay}}}
	}
	return nil
}

// Blocked is the 409 problem of a non-empty blocker list.
func Blocked(bs []Blocker) *i18n.Problem {
	out := make([]i18n.Blocker, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.I18n())
	}
	return operation.Blocked(out...).Perm(i18n.Temporary)
}

// Confirmation is what the customer saw of one mount and sends back with apply: the key and the
// volume, deliberately not the label (R22). The label is the platform's judgement and has
// nothing to decide on the other end.
type Confirmation struct {
	Key    string `json:"key" validate:"required,max=16"`
	Volume string `json:"volume" validate:"required,max=512"`
}

// Confirmations lists the confirmations of labelled mounts, in the mounts' order.
func Confirmations(mounts []Mount) []Confirmation {
	out := make([]Confirmation, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, Confirmation{Key: m.Key, Volume: m.Volume})
	}
	return out
}

// SnapshotConfirmationKey is the key of a snapshot's confirmation; its volume is the name.
const SnapshotConfirmationKey = "snapshot"

// Snapshot is a snapshot of the guest that a replacement erases (R44): the destroy takes the
// snapshots with the volumes (docs/proxmox.md §15).
type Snapshot struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// ConfirmationsOf lists everything a replacement asks the customer to confirm: the labelled
// mounts, then one {"key": "snapshot", "volume": <name>} per snapshot it erases (R44). A
// snapshot taken after the preview is therefore a difference, and the apply refuses as stale.
func ConfirmationsOf(f Facts) []Confirmation {
	out := Confirmations(f.Mounts)
	for _, s := range f.Snapshots {
		out = append(out, Confirmation{Key: SnapshotConfirmationKey, Volume: s.Name})
	}
	return out
}

// SameConfirmations reports whether two lists hold the same {key, volume} pairs, as many times
// each, in any order. Any difference (an added mount, a removed one, another volume under the
// same key) is a difference.
func SameConfirmations(a, b []Confirmation) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[Confirmation]int{}
	for _, c := range a {
		count[c]++
	}
	for _, c := range b {
		count[c]--
		if count[c] < 0 {
			return false
		}
	}
	return true
}
