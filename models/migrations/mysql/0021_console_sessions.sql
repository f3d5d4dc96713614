-- Open console sessions (R41): a claim also counts as an open session of its service and its
-- client while open_until (Unix seconds) is in the future. The relay that holds it renews it,
-- and sets it to 0 when the session ends; a replica that dies leaves its sessions to lapse. A
-- new session is refused when its service or its client already holds the most the console
-- allows, counted here across every replica.
ALTER TABLE console_claims ADD COLUMN client_id VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE console_claims ADD COLUMN open_until BIGINT NOT NULL DEFAULT 0;
CREATE INDEX ix_console_claims_open ON console_claims (client_id, open_until);
