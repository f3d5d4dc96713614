-- Request hashes written before they were keyed with the client's secret are unsalted SHA-256
-- of bodies that may carry a root password (R48): they are blanked. A retry of such a request
-- with its Idempotency-Key is then refused as idempotency_key_reused, never run twice.
UPDATE idempotency_keys SET request_hash = '';

-- Signatures of accepted mutating requests, refused when seen again (R47): the client and the
-- SHA-256 of the signature, kept until the signature's timestamp leaves the 300 s window.
-- expires_at is in Unix seconds.
CREATE TABLE seen_signatures (
  client_id VARCHAR(64) NOT NULL,
  sig_hash BLOB NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (client_id, sig_hash)
);

CREATE INDEX ix_seen_signatures_expires ON seen_signatures (expires_at);
