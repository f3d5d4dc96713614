package plans

import (
	"net/http"

	"pvebill/i18n"
)

// GuestType is the kind of guest a plan offers (docs/api.md: guest_type).
type GuestType string

// Guest types, in their canonical order.
const (
	Container GuestType = "container"
	VM        GuestType = "vm"
)

// GuestTypes lists every guest type in canonical order.
var GuestTypes = []GuestType{Container, VM}

// SuspendMode is how a VM of the plan is suspended (R15). A container is always stopped.
type SuspendMode string

// Suspend modes.
const (
	SuspendStop  SuspendMode = "stop"
	SuspendPause SuspendMode = "pause"
)

// CloneMode is how a VM is cloned from its template (R8).
type CloneMode string

// Clone modes.
const (
	CloneFull   CloneMode = "full"
	CloneLinked CloneMode = "linked"
)

// Source says where a saved plan came from.
type Source string

// Plan sources.
const (
	SourceFile Source = "file" // plans_file (or the embedded examples), upserted at start
	SourceAPI  Source = "api"  // PUT /v1/admin/plans/{code}
)

// OSCatalog is a plan's operating systems per guest type: for containers a name → ostemplate
// volume id (STORAGE:vztmpl/…), for VMs a name → template vmid. The vocabularies stay apart
// (R12): a container entry is never a vmid and a VM entry never a volume.
type OSCatalog struct {
	Container map[string]string     `json:"container,omitempty" yaml:"container" validate:"omitempty,dive,keys,required,max=64,endkeys,required,max=255"`
	VM        map[string]VMTemplate `json:"vm,omitempty" yaml:"vm" validate:"omitempty,dive,keys,required,max=64,endkeys"`
}

// Spec is a plan as written: the body of PUT /v1/admin/plans/{code} and one entry of
// plans_file. Optional values are pointers or empty so that "absent" can be told apart; Validate
// turns a Spec into a Plan where every value is explicit. The validate tags use only the
// validator's built-in rules, so that the HTTP layer's strict binding and Validate agree; the
// domain rules (formats, catalogs, R15) are code in validate.go.
type Spec struct {
	Code          string      `json:"code" yaml:"code" validate:"max=64"`
	Name          string      `json:"name" yaml:"name" validate:"required,max=255"`
	GuestTypes    []GuestType `json:"guest_types" yaml:"guest_types" validate:"required,min=1,unique,dive,oneof=container vm"`
	Cluster       string      `json:"cluster" yaml:"cluster" validate:"required,max=64"`
	Cores         *int        `json:"cores" yaml:"cores" validate:"required,min=1,max=512"`
	MemoryMiB     *int        `json:"memory_mib" yaml:"memory_mib" validate:"required,min=16,max=4194304"`
	SwapMiB       *int        `json:"swap_mib" yaml:"swap_mib" validate:"omitempty,min=0,max=4194304"`
	DiskGiB       *int        `json:"disk_gib" yaml:"disk_gib" validate:"required,min=1,max=65536"`
	Storage       string      `json:"storage" yaml:"storage" validate:"required,max=64"`
	Bridge        string      `json:"bridge" yaml:"bridge" validate:"required,max=15"`
	BandwidthGiB  *int64      `json:"bandwidth_gib" yaml:"bandwidth_gib" validate:"omitempty,min=1,max=1073741824"`
	RateMbps      *float64    `json:"rate_mbps" yaml:"rate_mbps" validate:"omitempty,min=0.01"`
	VMSuspendMode SuspendMode `json:"vm_suspend_mode" yaml:"vm_suspend_mode" validate:"omitempty,oneof=stop pause"`
	OS            OSCatalog   `json:"os" yaml:"os"`
	IPPool        *string     `json:"ip_pool" yaml:"ip_pool" validate:"omitempty,min=1,max=64"`
	IP6Pool       *string     `json:"ip6_pool" yaml:"ip6_pool" validate:"omitempty,min=1,max=64"`
	Nodes         []string    `json:"nodes" yaml:"nodes" validate:"omitempty,unique,dive,required,max=63"`
	VMClone       CloneMode   `json:"vm_clone" yaml:"vm_clone" validate:"omitempty,oneof=full linked"`

	// Snapshots (R44).
	SnapshotsMax *int `json:"snapshots_max" yaml:"snapshots_max" validate:"omitempty,min=0,max=100"`
	// Backups (R42). Without backup_storage the plan offers no backups and the other backup
	// fields must be absent.
	BackupStorage      string             `json:"backup_storage" yaml:"backup_storage" validate:"omitempty,max=64"`
	BackupsMax         *int               `json:"backups_max" yaml:"backups_max" validate:"omitempty,min=0,max=1000"`
	BackupSchedule     string             `json:"backup_schedule" yaml:"backup_schedule" validate:"omitempty,max=128"`
	BackupMode         BackupMode         `json:"backup_mode" yaml:"backup_mode" validate:"omitempty,oneof=snapshot stop"`
	BackupsOnTerminate BackupsOnTerminate `json:"backups_on_terminate" yaml:"backups_on_terminate" validate:"omitempty,oneof=delete keep"`
}

// BackupMode is vzdump's mode for the plan's backups (docs/proxmox.md §9.2).
type BackupMode string

// Backup modes.
const (
	BackupSnapshot BackupMode = "snapshot"
	BackupStop     BackupMode = "stop"
)

// BackupsOnTerminate is what a terminate does with the service's backups (R42).
type BackupsOnTerminate string

// What a terminate does with the backups.
const (
	BackupsDelete BackupsOnTerminate = "delete"
	BackupsKeep   BackupsOnTerminate = "keep"
)

// HasBackups reports whether the plan offers backups (it names a backup storage, R42).
func (p Plan) HasBackups() bool { return p.BackupStorage != "" }

// Plan is a validated plan with every value explicit: the shape stored in the plans table and
// answered by the API (without its capabilities, which are computed per request).
type Plan struct {
	Code       string      `json:"code"`
	Name       string      `json:"name"`
	GuestTypes []GuestType `json:"guest_types"` // canonical order: container, vm
	Cluster    string      `json:"cluster"`
	Cores      int         `json:"cores"`
	MemoryMiB  int         `json:"memory_mib"`
	// SwapMiB is sent to Proxmox as `swap` on every container create (R5); 0 when the Spec
	// had none. A VM has no swap setting.
	SwapMiB int    `json:"swap_mib"`
	DiskGiB int    `json:"disk_gib"`
	Storage string `json:"storage"`
	Bridge  string `json:"bridge"`
	// BandwidthGiB is the traffic allowance per billing period; nil is unlimited.
	BandwidthGiB *int64 `json:"bandwidth_gib"`
	// RateMbps is Proxmox's net `rate`: megabytes per second, as Proxmox reads "mbps"
	// (docs/proxmox.md §4.6); nil is no limit.
	RateMbps      *float64    `json:"rate_mbps"`
	VMSuspendMode SuspendMode `json:"vm_suspend_mode"`
	OS            OSCatalog   `json:"os"`
	// IPPool names an IPv4 pool; nil means DHCP.
	IPPool *string `json:"ip_pool"`
	// IP6Pool names an IPv6 pool (R54); nil means no IPv6 assignment.
	IP6Pool *string `json:"ip6_pool"`
	// Nodes are the nodes a guest of this plan may be placed on; empty means the cluster's.
	Nodes   []string  `json:"nodes"`
	VMClone CloneMode `json:"vm_clone"`

	// Snapshots (R44). SnapshotsMax is how many snapshots a guest may hold; 0 (the default)
	// turns snapshots off. StorageType is the Proxmox type of Storage (lvmthin, dir …), read
	// when the plan is saved and kept with it, from which the snapshot capability is decided;
	// empty when Proxmox could not be asked then.
	SnapshotsMax int    `json:"snapshots_max"`
	StorageType  string `json:"storage_type,omitempty"`
	// Backups (R42): BackupStorage "" is a plan without backups, the other fields then zero.
	// BackupStorage is the Proxmox storage (holding backup content) vzdump writes to;
	// BackupsMax how many backups a service keeps (the oldest unprotected one goes once a new
	// one is verified at the limit); BackupSchedule a robfig/cron spec ("" none).
	BackupStorage      string             `json:"backup_storage"`
	BackupsMax         int                `json:"backups_max"`
	BackupSchedule     string             `json:"backup_schedule"`
	BackupMode         BackupMode         `json:"backup_mode"`
	BackupsOnTerminate BackupsOnTerminate `json:"backups_on_terminate"`
}

// Offers reports whether the plan offers guest type t.
func (p Plan) Offers(t GuestType) bool {
	for _, g := range p.GuestTypes {
		if g == t {
			return true
		}
	}
	return false
}

// ChooseGuestType applies R4 to a create's guest_type (empty when the request named none): a
// plan offering one type answers that type; a plan offering both needs a choice
// (guest_type_required); a type the plan lacks is guest_type_not_offered. There is never a
// default underneath a choice.
func (p Plan) ChooseGuestType(requested string) (GuestType, error) {
	if requested == "" {
		if len(p.GuestTypes) == 1 {
			return p.GuestTypes[0], nil
		}
		return "", i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeGuestTypeRequired).Perm(i18n.Permanent)
	}
	t := GuestType(requested)
	if !p.Offers(t) {
		return "", i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeGuestTypeNotOffered).
			With("guest_type", requested).Perm(i18n.Permanent)
	}
	return t, nil
}

// ContainerTemplate returns the ostemplate volume id of a container OS in the plan's catalog,
// or os_not_offered.
func (p Plan) ContainerTemplate(os string) (string, error) {
	if v, ok := p.OS.Container[os]; ok && p.Offers(Container) {
		return v, nil
	}
	return "", osNotOffered(os, Container)
}

// VMTemplate returns the catalog entry of a VM OS in the plan (a template's vmid or name), or
// os_not_offered.
func (p Plan) VMTemplate(os string) (VMTemplate, error) {
	if v, ok := p.OS.VM[os]; ok && p.Offers(VM) {
		return v, nil
	}
	return VMTemplate{}, osNotOffered(os, VM)
}

func osNotOffered(os string, t GuestType) error {
	return i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeOSNotOffered).
		With("os", os).With("guest_type", string(t)).Perm(i18n.Permanent)
}
