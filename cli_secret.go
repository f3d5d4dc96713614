package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// secretBytes is the entropy of a generated secret: 32 bytes, written as 64 hex characters.
const secretBytes = 32

// cmdSecret writes a new random secret into FILE unless FILE already holds one, so that a
// container stack can run it on every start and keep the secret of the first (a config names
// the file as a client's secret_file). The file is the owner's alone (0600, its folder 0700
// when made here). The secret is printed only on request (--print), for an operator who copies
// it into a billing system: a service's output ends up in its logs.
func cmdSecret(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("secret", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "", "file to write the secret into (kept when it already holds one)")
	show := fl.Bool("print", false, "print the secret (new or kept) on standard output")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fl.NArg() != 0 {
		_, _ = fmt.Fprintln(stderr, "usage: pvebill secret --out FILE")
		return 2
	}
	created, err := createSecretFile(*out)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill secret:", err)
		return 1
	}
	verb := "kept the secret in"
	if created {
		verb = "wrote a new secret to"
	}
	if !*show {
		_, _ = fmt.Fprintln(stdout, verb, *out)
		return 0
	}
	raw, err := os.ReadFile(*out)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "pvebill secret:", err)
		return 1
	}
	_, _ = fmt.Fprintln(stderr, verb, *out)
	_, _ = fmt.Fprint(stdout, string(raw))
	return 0
}

// createSecretFile writes a fresh secret to path unless a non-empty file is there already. The
// secret goes to a private temporary file first and is linked into place, so two starts at
// once keep exactly one secret and a reader never sees half a file.
func createSecretFile(path string) (bool, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		if fi.Mode().Perm() == demoFileMode {
			return false, nil // also on a read-only mount
		}
		return false, os.Chmod(path, demoFileMode)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	err = f.Chmod(demoFileMode)
	if err == nil {
		_, err = f.WriteString(randomHex(secretBytes) + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		_ = os.Remove(path) // an empty file left by a crash holds no secret
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}
