-- IPv4 pools and the addresses allocated from them. An address is stored as its 32-bit value so
-- that ranges and "the lowest free one" are integer comparisons. ip_allocations is keyed on
-- (pool, ip) and unique on (pool, service_id): two services can never hold one address and a
-- service holds at most one address per pool, whatever the number of replicas. The foreign key
-- refuses to drop a pool that still has allocations.
CREATE TABLE ip_pools (
  name VARCHAR(63) NOT NULL PRIMARY KEY,
  cluster VARCHAR(64) NOT NULL,
  bridge VARCHAR(15) NOT NULL,
  cidr VARCHAR(18) NOT NULL,
  gateway VARCHAR(15) NOT NULL,
  first_ip BIGINT NOT NULL,
  last_ip BIGINT NOT NULL,
  nameservers TEXT NOT NULL,
  source VARCHAR(8) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE ip_allocations (
  pool VARCHAR(63) NOT NULL,
  ip BIGINT NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (pool, ip),
  UNIQUE KEY uq_ip_allocations_pool_service (pool, service_id),
  KEY ix_ip_allocations_service (service_id),
  CONSTRAINT fk_ip_allocations_pool FOREIGN KEY (pool) REFERENCES ip_pools (name) ON DELETE RESTRICT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
