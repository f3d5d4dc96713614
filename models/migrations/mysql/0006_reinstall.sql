-- Reinstall intents (R18-R29): the customer-facing state of a container or VM reinstall. No
-- worker writes these rows; a read advances a row from the operation it is attached to, with a
-- compare-and-swap on generation. preview holds the mounts, labels, confirmations, root
-- filesystem sizes and blockers the customer saw; applied holds the confirmations and labels
-- sent back with apply (audit). No column ever holds a secret.
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
  preview MEDIUMTEXT NULL,
  applied MEDIUMTEXT NULL,
  reconciliation TEXT NULL,
  error_code VARCHAR(64) NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  KEY ix_reinstall_intents_service (service_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
