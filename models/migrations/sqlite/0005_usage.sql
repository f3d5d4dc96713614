-- Usage buckets (R32): one row per service and 5-minute bucket. bucket_start is unix seconds
-- (a multiple of 300). Sums and counts are stored, not averages, so a report over any period
-- weights every sample equally. A NULL is a value that is not known (R34), never zero.
CREATE TABLE usage_buckets (
  service_id VARCHAR(64) NOT NULL,
  bucket_start BIGINT NOT NULL,
  cluster VARCHAR(64) NOT NULL DEFAULT '',
  node VARCHAR(64) NOT NULL DEFAULT '',
  vmid INT NOT NULL,
  guest_type VARCHAR(16) NOT NULL DEFAULT '',
  samples INT NOT NULL,
  swap_samples INT NOT NULL DEFAULT 0,
  swap_sum BIGINT NOT NULL DEFAULT 0,
  swap_max BIGINT NULL,
  swap_limit BIGINT NULL,
  mem_sum BIGINT NOT NULL DEFAULT 0,
  mem_max BIGINT NULL,
  cpu_sum REAL NOT NULL DEFAULT 0,
  disk_max BIGINT NULL,
  netin_bytes BIGINT NULL,
  netout_bytes BIGINT NULL,
  last_netin BIGINT NULL,
  last_netout BIGINT NULL,
  last_uptime BIGINT NULL,
  last_sample_at BIGINT NOT NULL,
  PRIMARY KEY (service_id, bucket_start)
);

CREATE INDEX ix_usage_buckets_start ON usage_buckets (bucket_start);
