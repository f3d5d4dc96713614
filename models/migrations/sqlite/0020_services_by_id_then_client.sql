-- An admin's usage report pages through every client's services by (service_id, client_id), and
-- the admin's service routes list the clients of an id in client order (R46): the index on
-- service_id gains client_id so both read in index order instead of sorting every service after
-- the cursor. The old index is a prefix of the new one and goes.
CREATE INDEX ix_services_service_client ON services (service_id, client_id);
DROP INDEX ix_services_service_id;
