-- Usage in three tiers (R45): 5-minute, 1-hour and 1-day buckets (UTC), each holding sums,
-- counts, maxima and network deltas, so that a report read from a coarser tier equals what the
-- 5-minute buckets alone give. A row is compact: the service is keyed by services.id and the
-- node by a small id (usage_nodes), bucket times are unix seconds, and the primary key is the
-- only index. A NULL is a value that is not known (R34), never zero. The 5-minute tier also
-- keeps the folder's counters (last_*), which the coarser tiers do not need.
CREATE TABLE usage_nodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cluster VARCHAR(64) NOT NULL,
  node VARCHAR(64) NOT NULL,
  UNIQUE (cluster, node)
);

CREATE TABLE usage_5m (
  svc INT UNSIGNED NOT NULL,
  start INT UNSIGNED NOT NULL,
  node_id SMALLINT UNSIGNED NOT NULL,
  samples SMALLINT UNSIGNED NOT NULL,
  swap_samples SMALLINT UNSIGNED NOT NULL,
  swap_sum BIGINT NOT NULL,
  swap_max BIGINT NULL,
  swap_limit BIGINT NULL,
  mem_sum BIGINT NOT NULL,
  mem_max BIGINT NULL,
  cpu_sum REAL NOT NULL,
  disk_max BIGINT NULL,
  netin BIGINT NULL,
  netout BIGINT NULL,
  last_netin BIGINT NULL,
  last_netout BIGINT NULL,
  last_uptime BIGINT NULL,
  last_sample_at INT UNSIGNED NOT NULL,
  PRIMARY KEY (svc, start)
) WITHOUT ROWID;

CREATE TABLE usage_1h (
  svc INT UNSIGNED NOT NULL,
  start INT UNSIGNED NOT NULL,
  node_id SMALLINT UNSIGNED NOT NULL,
  samples INT UNSIGNED NOT NULL,
  swap_samples INT UNSIGNED NOT NULL,
  swap_sum BIGINT NOT NULL,
  swap_max BIGINT NULL,
  swap_limit BIGINT NULL,
  mem_sum BIGINT NOT NULL,
  mem_max BIGINT NULL,
  cpu_sum REAL NOT NULL,
  disk_max BIGINT NULL,
  netin BIGINT NULL,
  netout BIGINT NULL,
  PRIMARY KEY (svc, start)
) WITHOUT ROWID;

CREATE TABLE usage_1d (
  svc INT UNSIGNED NOT NULL,
  start INT UNSIGNED NOT NULL,
  node_id SMALLINT UNSIGNED NOT NULL,
  samples INT UNSIGNED NOT NULL,
  swap_samples INT UNSIGNED NOT NULL,
  swap_sum BIGINT NOT NULL,
  swap_max BIGINT NULL,
  swap_limit BIGINT NULL,
  mem_sum BIGINT NOT NULL,
  mem_max BIGINT NULL,
  cpu_sum REAL NOT NULL,
  disk_max BIGINT NULL,
  netin BIGINT NULL,
  netout BIGINT NULL,
  PRIMARY KEY (svc, start)
) WITHOUT ROWID;

-- How far each coarse tier is rolled up: every period that starts before done_until is closed
-- and written.
CREATE TABLE usage_rollups (
  tier VARCHAR(8) NOT NULL PRIMARY KEY,
  done_until BIGINT NOT NULL
);

-- The existing 5-minute buckets are carried over (a bucket of a service no longer in services
-- has nothing to be billed to and is left behind).
INSERT OR IGNORE INTO usage_nodes (cluster, node) SELECT DISTINCT cluster, node FROM usage_buckets;

INSERT INTO usage_5m (svc, start, node_id, samples, swap_samples, swap_sum, swap_max, swap_limit, mem_sum,
  mem_max, cpu_sum, disk_max, netin, netout, last_netin, last_netout, last_uptime, last_sample_at)
SELECT s.id, b.bucket_start, n.id, b.samples, b.swap_samples, b.swap_sum, b.swap_max, b.swap_limit, b.mem_sum,
  b.mem_max, b.cpu_sum, b.disk_max, b.netin_bytes, b.netout_bytes, b.last_netin, b.last_netout, b.last_uptime,
  b.last_sample_at
FROM usage_buckets b
JOIN services s ON s.service_id = b.service_id
JOIN usage_nodes n ON n.cluster = b.cluster AND n.node = b.node;

DROP TABLE usage_buckets;
