package i18n

import (
	"fmt"
	"net/http"
	"strings"
)

// Code is a stable, machine-readable error code (snake_case). Every Code has a message in each
// of the nine catalogs; a reason that is not a Code cannot be shown to a customer.
type Code string

// The error codes of the API (docs/api.md "Error codes"). Adding one means adding its message to
// every catalog; TestCatalogsComplete fails otherwise.
const (
	CodeSignatureInvalid      Code = "signature_invalid"
	CodeSignatureExpired      Code = "signature_expired"
	CodeSignatureReplayed     Code = "signature_replayed" // a mutating request's signature used again (R47)
	CodeForbidden             Code = "forbidden"
	CodeNotFound              Code = "not_found"
	CodeRouteNotFound         Code = "route_not_found"
	CodeMethodNotAllowed      Code = "method_not_allowed"
	CodeValidationFailed      Code = "validation_failed"
	CodeBodyTooLarge          Code = "body_too_large"
	CodeUnsupportedMediaType  Code = "unsupported_media_type"
	CodeMalformedJSON         Code = "malformed_json"
	CodeGuestTypeRequired     Code = "guest_type_required"
	CodeGuestTypeNotOffered   Code = "guest_type_not_offered"
	CodeOSNotOffered          Code = "os_not_offered"
	CodeServiceExists         Code = "service_exists"
	CodeIdempotencyKeyReused  Code = "idempotency_key_reused"
	CodeIdempotencyInProgress Code = "idempotency_key_in_progress"
	CodeBlocked               Code = "blocked"
	CodeConfirmationsMismatch Code = "confirmations_mismatch"
	CodePreviewStale          Code = "preview_stale"
	CodeReinstallInProgress   Code = "reinstall_in_progress"
	CodeGuestNotOurs          Code = "guest_not_ours"
	CodeNotPossibleContainer  Code = "not_possible_for_container"
	CodeNotYetAvailable       Code = "not_yet_available"
	CodeServiceLocked         Code = "service_locked"
	CodeProxmoxUnavailable    Code = "proxmox_unavailable"
	CodeProxmoxTaskFailed     Code = "proxmox_task_failed"
	CodeInternal              Code = "internal_error"
	CodeUnavailable           Code = "service_unavailable"
	CodeOperationInterrupted  Code = "operation_interrupted"
	CodeIPPoolExhausted       Code = "ip_pool_exhausted"
	CodeIPPoolNotFound        Code = "ip_pool_not_found"
	CodeIPPoolInUse           Code = "ip_pool_in_use"
	// CodeNothingToReconcile: the admin reconcile route on a service that does not await
	// reconciliation (R28).
	CodeNothingToReconcile Code = "nothing_to_reconcile"
	// CodeServiceSuspended: start or reboot of a suspended or limited service (R40); lifting a
	// suspension is the billing system's, not the customer's.
	CodeServiceSuspended Code = "service_suspended"
	// CodeGuestNotRunning: reboot of a guest that does not run (R40).
	CodeGuestNotRunning Code = "guest_not_running"
	// CodeShutdownTimeout: a shutdown that ran out of time; the guest still runs and was not
	// stopped (R40).
	CodeShutdownTimeout Code = "shutdown_timeout"
	// CodeCapabilityRefused: a request for a capability the service's plan refuses (R10), with
	// the refusal's permanence and its reason (Problem.Reason).
	CodeCapabilityRefused Code = "capability_refused"
	// CodeSnapshotLimitReached: a snapshot create when the guest holds snapshots_max snapshots
	// (R44).
	CodeSnapshotLimitReached Code = "snapshot_limit_reached"
	// CodeSnapshotExists: a snapshot create with the name of one the guest has (R44).
	CodeSnapshotExists Code = "snapshot_exists"
	// CodeBackupProtected: a delete of a backup marked protected in Proxmox (R42).
	CodeBackupProtected Code = "backup_protected"
	// CodeBackupLimitReached: a backup at backups_max when every kept backup is protected, so
	// none can be rotated out; nothing was sent (R42).
	CodeBackupLimitReached Code = "backup_limit_reached"
	// CodeBackupNotVerified: vzdump ended but its archive was not found, was empty or did not
	// carry the service's stamp; no older backup was rotated out (R42).
	CodeBackupNotVerified Code = "backup_not_verified"
	// CodeConsoleExpired: a console token past its 60 s, used before, or not valid (R41).
	CodeConsoleExpired Code = "console_expired"
	// CodeServiceAmbiguous: an admin named a service id that several clients have without
	// naming the client (R46).
	CodeServiceAmbiguous Code = "service_ambiguous"
	// CodeConsoleSessionLimit: a console beyond console.max_sessions_per_service or
	// console.max_sessions_per_client open sessions (R41); temporary.
	CodeConsoleSessionLimit Code = "console_session_limit"
	// CodeNoCapacity: no node of the cluster is a candidate for the plan (R52); temporary,
	// nothing was sent to Proxmox.
	CodeNoCapacity Code = "no_capacity"
	// CodeAddressNotAssigned: a reverse DNS name for an address the service does not hold (R55);
	// permanent, nothing written.
	CodeAddressNotAssigned Code = "address_not_assigned"
	// CodeMigrationRefused: Proxmox refuses to move the guest for a cause in the guest itself
	// (its local devices or disks); permanent, the reason names the cause (R53).
	CodeMigrationRefused Code = "migration_refused"
	// CodeRDNSLimitReached: a reverse DNS name for one more address when the service already has
	// names for the most addresses allowed (R55); permanent, nothing written. A name for an
	// address that has one is a replacement and always allowed.
	CodeRDNSLimitReached Code = "rdns_limit_reached"
)

// ParamReason is the problem parameter that carries a reason outside the catalog (Proxmox's own
// words); an operation ending with it keeps it as its error's reason.
const ParamReason = "reason"

// Codes lists every error code, for the catalog completeness test and the OpenAPI enum.
var Codes = []Code{
	CodeSignatureInvalid, CodeSignatureExpired, CodeForbidden, CodeNotFound, CodeRouteNotFound,
	CodeMethodNotAllowed, CodeValidationFailed, CodeBodyTooLarge, CodeUnsupportedMediaType,
	CodeMalformedJSON, CodeGuestTypeRequired, CodeGuestTypeNotOffered, CodeOSNotOffered,
	CodeServiceExists, CodeIdempotencyKeyReused, CodeIdempotencyInProgress, CodeBlocked,
	CodeConfirmationsMismatch, CodePreviewStale, CodeReinstallInProgress, CodeGuestNotOurs,
	CodeNotPossibleContainer, CodeNotYetAvailable, CodeServiceLocked, CodeProxmoxUnavailable,
	CodeProxmoxTaskFailed, CodeInternal, CodeUnavailable, CodeOperationInterrupted,
	CodeIPPoolExhausted, CodeIPPoolNotFound, CodeIPPoolInUse, CodeNothingToReconcile,
	CodeServiceSuspended, CodeGuestNotRunning, CodeShutdownTimeout, CodeSignatureReplayed,
	CodeCapabilityRefused, CodeSnapshotLimitReached, CodeSnapshotExists,
	CodeBackupProtected, CodeBackupLimitReached, CodeBackupNotVerified,
	CodeConsoleExpired,
	CodeServiceAmbiguous,
	CodeConsoleSessionLimit,
	CodeNoCapacity,
	CodeAddressNotAssigned,
	CodeMigrationRefused,
	CodeRDNSLimitReached,
}

// FieldCode is the code of one field validation failure inside a validation_failed problem.
type FieldCode string

// Field validation codes.
const (
	FieldRequired     FieldCode = "required"
	FieldUnknown      FieldCode = "unknown_field"
	FieldType         FieldCode = "wrong_type"
	FieldTooShort     FieldCode = "too_short"
	FieldTooLong      FieldCode = "too_long"
	FieldTooSmall     FieldCode = "too_small"
	FieldTooLarge     FieldCode = "too_large"
	FieldOneOf        FieldCode = "not_allowed_value"
	FieldPattern      FieldCode = "bad_format"
	FieldInvalid      FieldCode = "invalid"
	FieldRequiredOne  FieldCode = "required_one_of"
	FieldDuplicate    FieldCode = "duplicate"
	FieldBadTimestamp FieldCode = "bad_timestamp"
	// FieldRepeated: a JSON member given twice in one object (never resolved to either value).
	FieldRepeated FieldCode = "repeated_field"
	// FieldNotUTF8: text that is not UTF-8 (never replaced by U+FFFD).
	FieldNotUTF8 FieldCode = "not_utf8"
	// FieldNotApplicable: the field does not apply to what the object offers (a VM-only plan
	// with swap, a container-only plan with a VM catalog); {param} names what it offers.
	FieldNotApplicable FieldCode = "not_applicable"
	// FieldNotForFamily: an IP pool field that does not apply to the pool's address family
	// (first/last in an IPv6 pool, assign_prefix in an IPv4 one, R54); {param} is the family.
	FieldNotForFamily FieldCode = "not_for_family"
	// IPv4 pools: an address or network that is not IPv4, an address outside the pool's
	// network, the network or broadcast address, an address inside the allocation range that
	// must stay out of it (the gateway), a network written with host bits set. {param} is the
	// network, the range, or the canonical form.
	FieldNotIPv4         FieldCode = "not_ipv4"
	FieldOutsideNetwork  FieldCode = "outside_network"
	FieldReservedAddress FieldCode = "reserved_address"
	FieldInsideRange     FieldCode = "inside_range"
	FieldNotCanonical    FieldCode = "not_canonical"
)

// FieldCodes lists every field code.
var FieldCodes = []FieldCode{
	FieldRequired, FieldUnknown, FieldType, FieldTooShort, FieldTooLong, FieldTooSmall,
	FieldTooLarge, FieldOneOf, FieldPattern, FieldInvalid, FieldRequiredOne, FieldDuplicate,
	FieldBadTimestamp, FieldNotApplicable, FieldNotIPv4, FieldOutsideNetwork, FieldReservedAddress,
	FieldInsideRange, FieldNotCanonical, FieldRepeated, FieldNotUTF8, FieldNotForFamily,
}

// Permanence tells a caller whether retrying can ever help.
type Permanence string

// Permanence values.
const (
	Permanent Permanence = "permanent"
	Temporary Permanence = "temporary"
)

// FieldError is one field validation failure. Param feeds the message template ({param}).
type FieldError struct {
	Field string
	Code  FieldCode
	Param string
}

// Blocker is a typed reason that refuses an irreversible step. Its message comes from the
// catalog key "blocker.<code>"; Params fill the template.
type Blocker struct {
	Code   string
	Params map[string]string
}

// Problem is a typed refusal: an error carrying everything the server needs to answer with
// application/problem+json. Domain code returns Problems; server/ maps them in one place.
type Problem struct {
	Status     int
	Code       Code
	Permanence Permanence
	Params     map[string]string
	Fields     []FieldError
	Blockers   []Blocker
	// Reason is the catalog key of why a capability is refused (capability_refused), answered
	// translated as the problem's "reason".
	Reason string
	Cause  error
}

// NewProblem builds a Problem with the given status and code.
func NewProblem(status int, code Code) *Problem {
	return &Problem{Status: status, Code: code}
}

// With sets a template parameter and returns p.
func (p *Problem) With(key, value string) *Problem {
	if p.Params == nil {
		p.Params = map[string]string{}
	}
	p.Params[key] = value
	return p
}

// Perm sets the permanence and returns p.
func (p *Problem) Perm(v Permanence) *Problem { p.Permanence = v; return p }

// Wrap records an underlying cause (logged, never shown) and returns p.
func (p *Problem) Wrap(err error) *Problem { p.Cause = err; return p }

// Error renders the code and, for logs, the cause. It never contains translated text.
func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", p.Status, p.Code)
	for _, f := range p.Fields {
		fmt.Fprintf(&b, " %s:%s", f.Field, f.Code)
	}
	if p.Cause != nil {
		b.WriteString(": ")
		b.WriteString(p.Cause.Error())
	}
	return b.String()
}

// Unwrap exposes the cause to errors.Is/As.
func (p *Problem) Unwrap() error { return p.Cause }

// Validation builds a 422 validation_failed problem from field errors.
func Validation(fields ...FieldError) *Problem {
	return &Problem{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed, Fields: fields}
}
