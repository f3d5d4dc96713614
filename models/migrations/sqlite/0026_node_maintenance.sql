-- Nodes in maintenance (R52): placement sends no new guest to a node listed here, on any
-- replica, from the moment its row exists. drain records that the operator asked for the
-- node's guests to be moved away (the migrate operations themselves are ordinary operations).
CREATE TABLE node_maintenance (
  cluster VARCHAR(64) NOT NULL,
  node VARCHAR(64) NOT NULL,
  drain SMALLINT NOT NULL DEFAULT 0,
  since DATETIME NOT NULL,
  PRIMARY KEY (cluster, node)
);

-- An operation's error also keeps whether asking again can help and, where the refusal has one,
-- its reason as Proxmox gave it (a migration Proxmox refuses names the guest's blockers).
ALTER TABLE operations ADD COLUMN error_permanence VARCHAR(16) NULL;
ALTER TABLE operations ADD COLUMN error_reason VARCHAR(1000) NULL;
