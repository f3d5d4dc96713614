-- IPv6 pools (R54): a pool whose cidr is IPv6 hands out prefixes of assign_prefix bits (0 for an
-- IPv4 pool). An allocation's ip is then the index of the prefix inside the pool's cidr, so the
-- same keys and the same "lowest free index" query serve both families, and only what is
-- assigned is stored. cidr and gateway widen to hold an IPv6 network and address.
ALTER TABLE ip_pools ADD COLUMN assign_prefix TINYINT UNSIGNED NOT NULL DEFAULT 0 AFTER last_ip,
  MODIFY cidr VARCHAR(43) NOT NULL, MODIFY gateway VARCHAR(39) NOT NULL;
