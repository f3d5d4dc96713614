-- Request hashes written before they were keyed with the client's secret are unsalted SHA-256
-- of bodies that may carry a root password (R48): they are blanked. A retry of such a request
-- with its Idempotency-Key is then refused as idempotency_key_reused, never run twice.
UPDATE idempotency_keys SET request_hash = '';
