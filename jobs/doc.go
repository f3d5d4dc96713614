// Package jobs holds pvebill's cron jobs (robfig/cron/v3) and the wrapper every job runs in:
// recover, skip-if-still-running, a per-round deadline and metrics.
//
// A job adds only scheduling, fleet-wide leases and metrics; what it does lives in the packages
// it calls (models, modules), and nothing here is called from the HTTP layer.
package jobs
