-- A restore is a replacement too (R43): its intent is a reinstall intent of kind 'restore',
-- naming the backup it restores (the archive's file name, one of the service's own backups).
ALTER TABLE reinstall_intents ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'reinstall';
ALTER TABLE reinstall_intents ADD COLUMN backup_id VARCHAR(128) NULL;
