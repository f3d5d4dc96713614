-- Bandwidth per billing period (R16): the bytes a service moved (in + out) since period_start,
-- and the last raw counter seen in /cluster/resources, so that a counter reset (a guest restart)
-- adds the new counter instead of a negative delta.
CREATE TABLE bandwidth_usage (
  service_id VARCHAR(64) NOT NULL PRIMARY KEY,
  period_start DATETIME NOT NULL,
  bytes BIGINT NOT NULL DEFAULT 0,
  last_counter BIGINT NULL,
  updated_at DATETIME NOT NULL
);
