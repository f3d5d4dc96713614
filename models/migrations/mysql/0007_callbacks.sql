-- Completion callbacks: one delivery row per operation end (the row is the queue), and the log
-- of its attempts.
CREATE TABLE callback_deliveries (
  id VARCHAR(36) NOT NULL PRIMARY KEY,
  client_id VARCHAR(64) NOT NULL,
  operation_id VARCHAR(36) NOT NULL,
  operation_state VARCHAR(32) NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  body MEDIUMTEXT NOT NULL,
  state VARCHAR(16) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6) NOT NULL,
  lease_owner VARCHAR(64) NULL,
  lease_until DATETIME(6) NULL,
  last_status INT NULL,
  last_error TEXT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  delivered_at DATETIME(6) NULL,
  UNIQUE KEY uq_callback_deliveries_operation (operation_id, operation_state),
  KEY ix_callback_deliveries_due (state, next_attempt_at),
  KEY ix_callback_deliveries_client (client_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE callback_attempts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  delivery_id VARCHAR(36) NOT NULL,
  attempt INT NOT NULL,
  at DATETIME(6) NOT NULL,
  url VARCHAR(2048) NOT NULL DEFAULT '',
  status INT NULL,
  error TEXT NULL,
  duration_ms INT NOT NULL DEFAULT 0,
  KEY ix_callback_attempts_delivery (delivery_id, attempt)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The enqueue sweep looks for operations that ended recently.
CREATE INDEX ix_operations_finished ON operations (finished_at);
