-- IPv4 pools and the addresses allocated from them (see the MySQL file for the reasoning).
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
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);

CREATE TABLE ip_allocations (
  pool VARCHAR(63) NOT NULL REFERENCES ip_pools (name) ON DELETE RESTRICT,
  ip BIGINT NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  created_at DATETIME NOT NULL,
  PRIMARY KEY (pool, ip)
);

CREATE UNIQUE INDEX uq_ip_allocations_pool_service ON ip_allocations (pool, service_id);

CREATE INDEX ix_ip_allocations_service ON ip_allocations (service_id);
