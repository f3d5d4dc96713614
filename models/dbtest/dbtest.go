package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pvebill/models"
)

// Dialects returns the dialects a test should run on: SQLite always, MySQL when configured.
func Dialects(t testing.TB) []string {
	out := []string{models.SQLite}
	if os.Getenv("PVEBILL_TEST_MYSQL_DSN") != "" {
		out = append(out, models.MySQL)
	} else if os.Getenv("PVEBILL_TEST_REQUIRE_MYSQL") == "1" {
		t.Fatal("PVEBILL_TEST_REQUIRE_MYSQL=1 but PVEBILL_TEST_MYSQL_DSN is not set")
	}
	return out
}

// Each runs f as a subtest per dialect with a fresh, migrated database.
func Each(t *testing.T, f func(t *testing.T, db *models.DB)) {
	for _, d := range Dialects(t) {
		t.Run(d, func(t *testing.T) { f(t, Open(t, d)) })
	}
}

// Open returns a fresh migrated database of the dialect, closed and removed at cleanup.
func Open(t testing.TB, dialect string) *models.DB {
	t.Helper()
	db := OpenEmpty(t, dialect)
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", dialect, err)
	}
	return db
}

// DSN returns a driver and DSN for a fresh, empty database of the dialect (for tests that start
// a whole pvebill process against it).
func DSN(t testing.TB, dialect string) string {
	t.Helper()
	switch dialect {
	case models.SQLite:
		return filepath.Join(t.TempDir(), "pvebill.db")
	case models.MySQL:
		base := os.Getenv("PVEBILL_TEST_MYSQL_DSN")
		if base == "" {
			t.Skip("PVEBILL_TEST_MYSQL_DSN not set")
		}
		name := "pvebill_test_" + randHex(6)
		admin, err := models.Open(models.MySQL, base)
		if err != nil {
			t.Fatalf("open mysql: %v", err)
		}
		defer admin.Close()
		if err := admin.Gorm.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin").Error; err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			a, err := models.Open(models.MySQL, base)
			if err == nil {
				a.Gorm.Exec("DROP DATABASE IF EXISTS " + name)
				a.Close()
			}
		})
		if marker := os.Getenv("PVEBILL_TEST_MYSQL_MARKER"); marker != "" {
			_ = os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
		}
		return withDB(base, name)
	}
	t.Fatalf("unknown dialect %q", dialect)
	return ""
}

// OpenEmpty returns a fresh database without the schema.
func OpenEmpty(t testing.TB, dialect string) *models.DB {
	t.Helper()
	db, err := models.Open(dialect, DSN(t, dialect))
	if err != nil {
		t.Fatalf("open %s: %v", dialect, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func withDB(base, name string) string {
	slash := strings.LastIndex(base, "/")
	if slash < 0 {
		return base + "/" + name
	}
	rest := base[slash+1:]
	q := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q = rest[i:]
	}
	return base[:slash+1] + name + q
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
