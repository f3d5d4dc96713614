CREATE TABLE services (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  service_id VARCHAR(64) NOT NULL,
  client_id VARCHAR(64) NOT NULL,
  plan VARCHAR(64) NOT NULL DEFAULT '',
  guest_type VARCHAR(16) NOT NULL DEFAULT '',
  cluster VARCHAR(64) NOT NULL DEFAULT '',
  node VARCHAR(64) NOT NULL DEFAULT '',
  vmid INT NULL,
  hostname VARCHAR(255) NOT NULL DEFAULT '',
  state VARCHAR(32) NOT NULL,
  params_hash CHAR(64) NOT NULL DEFAULT '',
  lock_operation_id VARCHAR(36) NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);

CREATE UNIQUE INDEX uq_services_service_id ON services (service_id);

CREATE UNIQUE INDEX uq_services_cluster_vmid ON services (cluster, vmid);

CREATE INDEX ix_services_client ON services (client_id);

CREATE TABLE operations (
  id VARCHAR(36) NOT NULL PRIMARY KEY,
  service_id VARCHAR(64) NOT NULL,
  client_id VARCHAR(64) NOT NULL,
  action VARCHAR(32) NOT NULL,
  state VARCHAR(32) NOT NULL,
  stage VARCHAR(32) NOT NULL DEFAULT '',
  stage_index INT NOT NULL DEFAULT -1,
  payload TEXT NOT NULL,
  result TEXT NULL,
  error_code VARCHAR(64) NULL,
  error_detail TEXT NULL,
  attempts INT NOT NULL DEFAULT 0,
  lease_owner VARCHAR(64) NULL,
  lease_until DATETIME NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  started_at DATETIME NULL,
  finished_at DATETIME NULL
);

CREATE INDEX ix_operations_claim ON operations (state, created_at);

CREATE INDEX ix_operations_service ON operations (service_id, created_at);

CREATE TABLE idempotency_keys (
  client_id VARCHAR(64) NOT NULL,
  idem_key VARCHAR(255) NOT NULL,
  request_hash CHAR(64) NOT NULL,
  state VARCHAR(16) NOT NULL,
  status_code INT NOT NULL DEFAULT 0,
  content_type VARCHAR(128) NOT NULL DEFAULT '',
  location VARCHAR(255) NOT NULL DEFAULT '',
  response_body TEXT NULL,
  created_at DATETIME NOT NULL,
  expires_at DATETIME NOT NULL,
  PRIMARY KEY (client_id, idem_key)
);

CREATE INDEX ix_idempotency_expires ON idempotency_keys (expires_at);

CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at DATETIME NOT NULL,
  actor VARCHAR(64) NOT NULL,
  service_id VARCHAR(64) NOT NULL DEFAULT '',
  operation_id VARCHAR(36) NOT NULL DEFAULT '',
  event VARCHAR(64) NOT NULL,
  detail TEXT NULL
);

CREATE INDEX ix_audit_service ON audit_events (service_id, at);
