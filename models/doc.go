// Package models holds pvebill's gorm models, the versioned per-dialect SQL migrations and the
// small query functions the rest of the server uses. Models never leak into API types.
package models
