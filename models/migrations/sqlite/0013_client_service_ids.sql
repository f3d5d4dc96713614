-- Service ids are unique per client, not across every client (R46): the key of a service is
-- (client_id, service_id) in every table that names a service by its id. Tables that lacked
-- the client gain it, filled from services (service_id was still unique there).

-- The services that exist now may own guests stamped in the one-part form "pvebill-service: ID"
-- (R39); that form is accepted for them alone, since after this change a bare id no longer names
-- one service.
ALTER TABLE services ADD COLUMN legacy_stamp BOOLEAN NOT NULL DEFAULT 0;
UPDATE services SET legacy_stamp = 1;
DROP INDEX uq_services_service_id;
CREATE UNIQUE INDEX uq_services_client_service ON services (client_id, service_id);
CREATE INDEX ix_services_service_id ON services (service_id);

DROP INDEX ix_operations_service;
CREATE INDEX ix_operations_service ON operations (client_id, service_id, created_at);

DROP INDEX ix_reinstall_intents_service;
CREATE INDEX ix_reinstall_intents_service ON reinstall_intents (client_id, service_id, created_at);

ALTER TABLE ip_allocations ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '';
UPDATE ip_allocations SET client_id = COALESCE((SELECT s.client_id FROM services s WHERE s.service_id = ip_allocations.service_id), '');
DROP INDEX uq_ip_allocations_pool_service;
CREATE UNIQUE INDEX uq_ip_allocations_pool_service ON ip_allocations (pool, client_id, service_id);
DROP INDEX ix_ip_allocations_service;
CREATE INDEX ix_ip_allocations_service ON ip_allocations (client_id, service_id);

ALTER TABLE audit_events ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '';
UPDATE audit_events SET client_id = COALESCE((SELECT s.client_id FROM services s WHERE s.service_id = audit_events.service_id), '');
DROP INDEX ix_audit_service;
CREATE INDEX ix_audit_service ON audit_events (client_id, service_id, at);

-- bandwidth_usage was keyed by service_id alone: the table is made again with the client in its
-- key (a row of a service no longer in services has nothing to be billed to and is left behind).
CREATE TABLE bandwidth_usage_0013 (
  client_id VARCHAR(64) NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  period_start DATETIME NOT NULL,
  bytes BIGINT NOT NULL DEFAULT 0,
  last_counter BIGINT NULL,
  updated_at DATETIME NOT NULL,
  PRIMARY KEY (client_id, service_id)
);
INSERT INTO bandwidth_usage_0013 (client_id, service_id, period_start, bytes, last_counter, updated_at)
SELECT s.client_id, b.service_id, b.period_start, b.bytes, b.last_counter, b.updated_at
FROM bandwidth_usage b JOIN services s ON s.service_id = b.service_id;
DROP TABLE bandwidth_usage;
ALTER TABLE bandwidth_usage_0013 RENAME TO bandwidth_usage;
