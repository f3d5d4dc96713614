-- Placement counts the creates in flight on each node of a cluster (services still provisioning
-- with a node chosen); this index answers that without scanning every service.
CREATE INDEX ix_services_placement ON services (cluster, state, node);
