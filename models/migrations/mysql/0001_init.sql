CREATE TABLE services (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
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
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  UNIQUE KEY uq_services_service_id (service_id),
  UNIQUE KEY uq_services_cluster_vmid (cluster, vmid),
  KEY ix_services_client (client_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

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
  lease_until DATETIME(6) NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  started_at DATETIME(6) NULL,
  finished_at DATETIME(6) NULL,
  KEY ix_operations_claim (state, created_at),
  KEY ix_operations_service (service_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE idempotency_keys (
  client_id VARCHAR(64) NOT NULL,
  idem_key VARCHAR(255) NOT NULL,
  request_hash CHAR(64) NOT NULL,
  state VARCHAR(16) NOT NULL,
  status_code INT NOT NULL DEFAULT 0,
  content_type VARCHAR(128) NOT NULL DEFAULT '',
  location VARCHAR(255) NOT NULL DEFAULT '',
  response_body MEDIUMTEXT NULL,
  created_at DATETIME(6) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  PRIMARY KEY (client_id, idem_key),
  KEY ix_idempotency_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE audit_events (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at DATETIME(6) NOT NULL,
  actor VARCHAR(64) NOT NULL,
  service_id VARCHAR(64) NOT NULL DEFAULT '',
  operation_id VARCHAR(36) NOT NULL DEFAULT '',
  event VARCHAR(64) NOT NULL,
  detail TEXT NULL,
  KEY ix_audit_service (service_id, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
