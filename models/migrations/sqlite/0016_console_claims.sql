-- Console tokens that were opened (R41): a token is self-contained and MACed, so only its
-- random nonce is written here, on first open; the primary key makes a second open on any
-- replica a conflict. The row names the service by its internal id and is deleted once the
-- token has expired (expires_at, Unix seconds). No token, ticket or secret is stored.
CREATE TABLE console_claims (
  nonce BLOB NOT NULL PRIMARY KEY,
  service_ref BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);

CREATE INDEX ix_console_claims_expires ON console_claims (expires_at);
