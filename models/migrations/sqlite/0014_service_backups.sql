-- What pvebill last saw of each service's backups (R42): how many archives stamped for the
-- service there are and their bytes, written by every backup, rotation, delete and listing,
-- and read by the usage report (backup_bytes) and the per-service gauge. Keyed by the
-- service's internal id; seen_at is in Unix seconds.
CREATE TABLE service_backups (
  svc BIGINT NOT NULL PRIMARY KEY,
  backups INTEGER NOT NULL,
  bytes BIGINT NOT NULL,
  seen_at BIGINT NOT NULL
);
