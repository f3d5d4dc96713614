-- Console tokens that were opened (R41): a token is self-contained and MACed, so only its
-- random nonce is written here, on first open; the primary key makes a second open on any
-- replica a conflict. The row names the service by its internal id and is deleted once the
-- token has expired (expires_at, Unix seconds). No token, ticket or secret is stored.
CREATE TABLE console_claims (
  nonce BINARY(16) NOT NULL,
  service_ref BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (nonce),
  KEY ix_console_claims_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
