-- Service ids are unique per client, not across every client (R46): the key of a service is
-- (client_id, service_id) in every table that names a service by its id. Tables that lacked
-- the client gain it, filled from services (service_id was still unique there).

-- The services that exist now may own guests stamped in the one-part form "pvebill-service: ID"
-- (R39); that form is accepted for them alone, since after this change a bare id no longer names
-- one service.
ALTER TABLE services ADD COLUMN legacy_stamp BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE services SET legacy_stamp = TRUE;
ALTER TABLE services ADD UNIQUE KEY uq_services_client_service (client_id, service_id),
  ADD KEY ix_services_service_id (service_id), DROP INDEX uq_services_service_id;

ALTER TABLE operations ADD KEY ix_operations_client_service (client_id, service_id, created_at), DROP INDEX ix_operations_service;

ALTER TABLE reinstall_intents ADD KEY ix_reinstall_intents_client_service (client_id, service_id, created_at),
  DROP INDEX ix_reinstall_intents_service;

ALTER TABLE ip_allocations ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '' AFTER ip;
UPDATE ip_allocations a JOIN services s ON s.service_id = a.service_id SET a.client_id = s.client_id;
ALTER TABLE ip_allocations ADD UNIQUE KEY uq_ip_allocations_pool_client_service (pool, client_id, service_id),
  ADD KEY ix_ip_allocations_client_service (client_id, service_id),
  DROP INDEX uq_ip_allocations_pool_service, DROP INDEX ix_ip_allocations_service;

ALTER TABLE audit_events ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '' AFTER actor;
UPDATE audit_events a JOIN services s ON s.service_id = a.service_id SET a.client_id = s.client_id;
ALTER TABLE audit_events ADD KEY ix_audit_client_service (client_id, service_id, at), DROP INDEX ix_audit_service;

-- bandwidth_usage was keyed by service_id alone: it gains the client and its key becomes
-- (client_id, service_id); a row of a service no longer in services has nothing to be billed to
-- and is dropped.
ALTER TABLE bandwidth_usage ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '' FIRST;
UPDATE bandwidth_usage b JOIN services s ON s.service_id = b.service_id SET b.client_id = s.client_id;
DELETE FROM bandwidth_usage WHERE client_id = '';
ALTER TABLE bandwidth_usage DROP PRIMARY KEY, ADD PRIMARY KEY (client_id, service_id);
