-- Leases that coordinate replicas through the database: one row per cron job (who runs which
-- tick), per sampled node (which replica samples it) and per live replica (its heartbeat).
-- epoch grows each time a lease changes hands, so a holder can tell it was overtaken.
-- lease_until is in Unix microseconds: integers compare the same on both dialects.
CREATE TABLE leases (
  name VARCHAR(191) NOT NULL PRIMARY KEY,
  owner VARCHAR(128) NULL,
  epoch BIGINT NOT NULL DEFAULT 0,
  lease_until BIGINT NULL,
  last_tick BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME NOT NULL
);

CREATE INDEX ix_leases_owner ON leases (owner);
