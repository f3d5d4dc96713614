-- Self-healing operations (R58). Before an operation waits on a Proxmox task it records the
-- task's UPID and the stage that started it, so that a worker taking the operation over can read
-- how the task ended. resumed counts the times a run was resumed from the facts; reconciliation
-- holds the facts found and the reason when they did not suffice (needs_reconciliation); awaiting
-- names what a parked operation waits for ('password': a reinstall whose password died with a
-- replica, R26) and keeps it from being claimed until the billing system sends it again.
ALTER TABLE operations ADD COLUMN task_upid VARCHAR(255) NULL;
ALTER TABLE operations ADD COLUMN task_stage VARCHAR(32) NULL;
ALTER TABLE operations ADD COLUMN resumed INT NOT NULL DEFAULT 0;
ALTER TABLE operations ADD COLUMN reconciliation TEXT NULL;
ALTER TABLE operations ADD COLUMN awaiting VARCHAR(32) NULL;
