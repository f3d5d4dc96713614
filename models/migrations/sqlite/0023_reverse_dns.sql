-- Reverse DNS (R55): see the MySQL file for the reasoning.
ALTER TABLE ip_pools ADD COLUMN reverse_zone VARCHAR(255) NOT NULL DEFAULT '';

CREATE TABLE rdns_records (
  address VARCHAR(39) NOT NULL PRIMARY KEY,
  client_id VARCHAR(64) NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  pool VARCHAR(63) NOT NULL,
  zone VARCHAR(255) NOT NULL,
  hostname VARCHAR(253) NOT NULL,
  action VARCHAR(8) NOT NULL,
  status VARCHAR(8) NOT NULL,
  generation BIGINT NOT NULL,
  attempts INT NOT NULL,
  last_error VARCHAR(255) NOT NULL,
  changed_at DATETIME NOT NULL,
  next_attempt_at DATETIME NOT NULL,
  synced_at DATETIME NULL,
  claim_until BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);

CREATE INDEX ix_rdns_records_service ON rdns_records (client_id, service_id);

CREATE INDEX ix_rdns_records_due ON rdns_records (status, next_attempt_at);
