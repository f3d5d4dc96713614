// Package models holds pvebill's gorm models, the versioned per-dialect SQL migrations and the
// small query functions the rest of the server uses. Models never leak into API types.
//
// Nothing here imports a module (modules/...) or calls Proxmox: the modules import models, never
// the other way round.
package models
