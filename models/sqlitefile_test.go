package models_test

import (
	"os"
	"path/filepath"
	"testing"

	"pvebill/models"
)

// R48: the SQLite database file is created readable by its owner only, and an existing file
// readable by others is restricted when opened.
func TestSQLiteFileOwnerOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, existing} {
		db, err := models.Open(models.SQLite, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		sqlDB, err := db.Gorm.DB()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(f)
			if err != nil {
				continue // SQLite keeps no -wal / -shm file at this point
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", filepath.Base(f), st.Mode().Perm())
			}
		}
		if err := sqlDB.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
