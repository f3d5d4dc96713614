-- Completion callbacks: one delivery row per operation end (the row is the queue), and the log
-- of its attempts.
CREATE TABLE callback_deliveries (
  id VARCHAR(36) NOT NULL PRIMARY KEY,
  client_id VARCHAR(64) NOT NULL,
  operation_id VARCHAR(36) NOT NULL,
  operation_state VARCHAR(32) NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  body TEXT NOT NULL,
  state VARCHAR(16) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME NOT NULL,
  lease_owner VARCHAR(64) NULL,
  lease_until DATETIME NULL,
  last_status INT NULL,
  last_error TEXT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  delivered_at DATETIME NULL
);

CREATE UNIQUE INDEX uq_callback_deliveries_operation ON callback_deliveries (operation_id, operation_state);

CREATE INDEX ix_callback_deliveries_due ON callback_deliveries (state, next_attempt_at);

CREATE INDEX ix_callback_deliveries_client ON callback_deliveries (client_id, created_at);

CREATE TABLE callback_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id VARCHAR(36) NOT NULL,
  attempt INT NOT NULL,
  at DATETIME NOT NULL,
  url VARCHAR(2048) NOT NULL DEFAULT '',
  status INT NULL,
  error TEXT NULL,
  duration_ms INT NOT NULL DEFAULT 0
);

CREATE INDEX ix_callback_attempts_delivery ON callback_attempts (delivery_id, attempt);

-- The enqueue sweep looks for operations that ended recently.
CREATE INDEX ix_operations_finished ON operations (finished_at);
