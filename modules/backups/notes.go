package backups

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"pvebill/i18n"
	"pvebill/modules/kinds"
)

// A backup's notes (R42, docs/api.md Backups) are the service's stamp line, then a line naming
// the backup's kind, then the client's note when there is one:
//
//	pvebill-service: whmcs/1234
//	pvebill-backup: manual
//	before the upgrade
//
// Proxmox's listing carries the first line only (the stamp, which is what finds a service's
// backups); the kind and the note are read from the volume's own attributes.
const (
	BackupManual    = "manual"
	BackupScheduled = "scheduled"
	kindLinePrefix  = "pvebill-backup: "
	maxNoteRunes    = 200
)

// BackupRequest is the body of POST /v1/services/{id}/backups.
type BackupRequest struct {
	Note *string `json:"note"`
}

// note is the request's note: one line (no control characters) of at most 200 characters;
// anything else is 422 on the field note.
func (r BackupRequest) note() (string, error) {
	if r.Note == nil {
		return "", nil
	}
	n := *r.Note
	if utf8.RuneCountInString(n) > maxNoteRunes {
		return "", i18n.Validation(i18n.FieldError{Field: "note", Code: i18n.FieldTooLong, Param: "200"})
	}
	if strings.IndexFunc(n, unicode.IsControl) >= 0 {
		return "", i18n.Validation(i18n.FieldError{Field: "note", Code: i18n.FieldPattern})
	}
	return n, nil
}

// kind is the kind of the backup the payload asks for: scheduled when the schedule queued it.
func (p backupPayload) kind() string {
	if p.Scheduled != 0 {
		return BackupScheduled
	}
	return BackupManual
}

// notesTemplate is vzdump's notes-template for a backup of g: the lines above, as the one
// line Proxmox takes (a backslash written as two, a newline as backslash-n).
func notesTemplate(g kinds.Guest, p backupPayload) string {
	lines := []string{kinds.StampLine(g), kindLinePrefix + p.kind()}
	if p.Note != "" {
		lines = append(lines, p.Note)
	}
	esc := strings.NewReplacer(`\`, `\\`)
	for i := range lines {
		lines[i] = esc.Replace(lines[i])
	}
	return strings.Join(lines, `\n`)
}

// kindAndNote reads a backup's kind and note from its whole notes: the line after the kind
// line is the note. An archive without a kind line (made before kinds were written) is manual
// with no note.
func kindAndNote(notes string) (kind, note string) {
	lines := strings.Split(notes, "\n")
	for i, line := range lines {
		k, ok := strings.CutPrefix(strings.TrimSpace(line), kindLinePrefix)
		if !ok {
			continue
		}
		if k == BackupScheduled {
			kind = BackupScheduled
		}
		if i+1 < len(lines) {
			note = strings.TrimRight(lines[i+1], "\r")
		}
		break
	}
	if kind == "" {
		kind = BackupManual
	}
	return kind, note
}

// describe fills each listed backup's kind and note from the volume's attributes: one read per
// backup, made only for the list the client asked for.
func (b backupLister) describe(ctx context.Context, list []Backup) error {
	for i := range list {
		notes, err := b.cl.VolumeNotes(ctx, b.node, b.storage, list[i].volid)
		if err != nil {
			return err
		}
		list[i].Kind, list[i].Note = kindAndNote(notes)
	}
	return nil
}
