// Package jobs holds pvebill's cron jobs (robfig/cron/v3) and the wrapper every job runs in:
// recover, skip-if-still-running, a per-round deadline and metrics.
package jobs
