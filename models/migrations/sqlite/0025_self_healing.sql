-- Self-healing operations (R58): see the MySQL file for the reasoning.
ALTER TABLE operations ADD COLUMN task_upid VARCHAR(255) NULL;
ALTER TABLE operations ADD COLUMN task_stage VARCHAR(32) NULL;
ALTER TABLE operations ADD COLUMN resumed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE operations ADD COLUMN reconciliation TEXT NULL;
ALTER TABLE operations ADD COLUMN awaiting VARCHAR(32) NULL;
