package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// The embedded default's files are its owner's (R48), as the SQLite file is: data/demo.yaml
// holds a secret with admin scope. A directory or file left with wider modes by an earlier
// start, or made by hand, is tightened, not trusted.
const (
	demoDirMode  = 0o700
	demoFileMode = 0o600
)

// ownerOnlyDir creates dir readable by its owner only, or takes group and other permissions
// away from an existing one.
func ownerOnlyDir(dir string) error {
	if err := os.MkdirAll(dir, demoDirMode); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, st.Mode().Perm()&demoDirMode); err != nil {
		return fmt.Errorf("directory %s is open to others and cannot be restricted: %w", dir, err)
	}
	return nil
}

// writeOwnerOnly replaces path with data in a file readable by its owner only. The data is
// written to a new file (created 0600) beside it and renamed over it, so that it is never in a
// file with another mode, whatever the old file's mode was.
func writeOwnerOnly(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(demoFileMode)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
