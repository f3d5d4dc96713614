package console

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// R41: The committed client libraries are byte for byte what scripts/console-assets/fetch.sh copied
// from the npm packages pinned (with their integrity hashes) in its package-lock.json: every
// embedded vendor file is listed in SHA256SUMS with its hash, and the packages SHA256SUMS names
// are the lock's, at the lock's versions and integrity.
func TestVendoredAssetsMatchTheLock(t *testing.T) {
	raw, err := files.ReadFile("assets/vendor/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	packages := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# package "); ok {
			f := strings.Fields(rest)
			packages[f[0]] = f[1] + " " + f[2]
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		listed[name] = sum
	}
	var lock struct {
		Packages map[string]struct{ Version, Integrity string } `json:"packages"`
	}
	lockRaw, err := os.ReadFile("../../scripts/console-assets/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lockRaw, &lock); err != nil {
		t.Fatal(err)
	}
	for k, p := range lock.Packages {
		if name, ok := strings.CutPrefix(k, "node_modules/"); ok && packages[name] != p.Version+" "+p.Integrity {
			t.Errorf("package %s: SHA256SUMS says %q, the lock %s %s", name, packages[name], p.Version, p.Integrity)
		}
	}
	if len(packages) != 3 {
		t.Errorf("SHA256SUMS names %d packages, want @xterm/xterm, @xterm/addon-fit, @novnc/novnc", len(packages))
	}
	seen := 0
	err = fs.WalkDir(files, "assets/vendor", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "assets/vendor/SHA256SUMS" {
			return err
		}
		name := strings.TrimPrefix(p, "assets/vendor/")
		b, _ := files.ReadFile(p)
		sum := sha256.Sum256(b)
		switch want, ok := listed[name]; {
		case !ok:
			t.Errorf("%s is embedded but not in SHA256SUMS", name)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s differs from the fetched file (sha256 %x, recorded %s)", name, sum, want)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(listed) || seen < 40 {
		t.Errorf("%d files embedded, %d listed", seen, len(listed))
	}
}

// R41: The page's own scripts and styles name no other host: everything is loaded from pvebill.
func TestPageAssetsNameNoOtherHost(t *testing.T) {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, "assets/vendor/") {
			return err
		}
		b, _ := files.ReadFile(p)
		for _, scheme := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(string(b), scheme) {
				t.Errorf("%s contains %q", p, scheme)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
