package models

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// sqliteFileMode is the mode of the SQLite database file: readable by its owner only (R48).
const sqliteFileMode = 0o600

// sqlitePath returns the file a SQLite DSN names, or "" for an in-memory database.
func sqlitePath(dsn string) string {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if path == "" || path == ":memory:" || strings.Contains(dsn, "mode=memory") {
		return ""
	}
	return path
}

// prepareSQLiteFile creates the database file with mode 0600 before SQLite opens it, so it is
// never readable by others, and takes group and other permissions away from an existing file
// (SQLite gives its -wal and -shm files the database file's mode).
func prepareSQLiteFile(dsn string) error {
	path := sqlitePath(dsn)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create database file: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, st.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("database file %s is readable by others and cannot be restricted: %w", path, err)
	}
	return nil
}
