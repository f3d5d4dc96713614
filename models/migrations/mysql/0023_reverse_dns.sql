-- Reverse DNS (R55). A pool names the reverse zone its addresses' PTR records live in ('' = no
-- reverse DNS for the pool). rdns_records holds, per address, the PTR record pvebill wants
-- PowerDNS to have and whether PowerDNS has it yet: action 'set' (hostname) or 'delete' (the
-- service let the address go), status pending | synced | failed, the attempts and the last
-- error (never a secret). One row per address: an address is held by one service at a time,
-- and the next owner's record replaces the row of a removal still under way. generation counts
-- the changes of the wanted state, so an attempt that raced a newer change never marks it
-- synced; claim_until (Unix milliseconds, 0 = none) lets one replica at a time talk to PowerDNS
-- about one address.
ALTER TABLE ip_pools ADD COLUMN reverse_zone VARCHAR(255) NOT NULL DEFAULT '' AFTER nameservers;

CREATE TABLE rdns_records (
  address VARCHAR(39) NOT NULL PRIMARY KEY,
  client_id VARCHAR(64) NOT NULL,
  service_id VARCHAR(64) NOT NULL,
  pool VARCHAR(63) NOT NULL,
  zone VARCHAR(255) NOT NULL,
  hostname VARCHAR(253) NOT NULL,
  action VARCHAR(8) NOT NULL,
  status VARCHAR(8) NOT NULL,
  generation BIGINT NOT NULL,
  attempts INT NOT NULL,
  last_error VARCHAR(255) NOT NULL,
  changed_at DATETIME(6) NOT NULL,
  next_attempt_at DATETIME(6) NOT NULL,
  synced_at DATETIME(6) NULL,
  claim_until BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  KEY ix_rdns_records_service (client_id, service_id),
  KEY ix_rdns_records_due (status, next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
