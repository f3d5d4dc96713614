-- Reinstall intents (see the MySQL file for the reasoning).
CREATE TABLE reinstall_intents (
  id VARCHAR(36) NOT NULL PRIMARY KEY,
  service_id VARCHAR(64) NOT NULL,
  client_id VARCHAR(64) NOT NULL,
  state VARCHAR(32) NOT NULL,
  generation BIGINT NOT NULL,
  guest_type VARCHAR(16) NOT NULL,
  cluster VARCHAR(64) NOT NULL DEFAULT '',
  node VARCHAR(64) NOT NULL DEFAULT '',
  vmid INT NOT NULL,
  plan VARCHAR(64) NOT NULL DEFAULT '',
  os VARCHAR(64) NOT NULL DEFAULT '',
  operation_id VARCHAR(36) NOT NULL,
  preview TEXT NULL,
  applied TEXT NULL,
  reconciliation TEXT NULL,
  error_code VARCHAR(64) NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);

CREATE INDEX ix_reinstall_intents_service ON reinstall_intents (service_id, created_at);
