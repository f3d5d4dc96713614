-- At most one operation per gate runs at a time across every replica (R42: one vzdump per
-- node). An operation names its gate (NULL: none); the gate's row names the operation that
-- holds it, taken in the claim's transaction like the service lock and given back when the
-- operation ends or is released.
ALTER TABLE operations ADD COLUMN gate VARCHAR(128) NULL;
CREATE INDEX ix_operations_gate ON operations (gate, state);
CREATE TABLE operation_gates (
  gate VARCHAR(128) NOT NULL PRIMARY KEY,
  operation_id VARCHAR(36) NULL,
  updated_at DATETIME NOT NULL
);
