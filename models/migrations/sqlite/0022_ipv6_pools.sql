-- IPv6 pools (R54): see the MySQL file for the reasoning. SQLite's VARCHAR has no length limit.
ALTER TABLE ip_pools ADD COLUMN assign_prefix INTEGER NOT NULL DEFAULT 0;
