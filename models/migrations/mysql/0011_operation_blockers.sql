-- The blockers an operation's run found (R25) are kept beside its error code, as a JSON array of
-- {code, params}, so every view of the operation can list them; a reinstall intent that failed
-- with its operation keeps them beside its own error code.
ALTER TABLE operations ADD COLUMN error_blockers TEXT NULL;
ALTER TABLE reinstall_intents ADD COLUMN error_blockers TEXT NULL;
