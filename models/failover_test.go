package models_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/stack/stacktest/poll"
)

// R51: a replica given several database nodes uses the first one that answers and is ready; an
// unreachable node before it is reported, not used.
func TestOpenFailsOverAnUnreachableNode(t *testing.T) {
	t.Parallel()
	if len(dbtest.Dialects(t)) < 2 {
		t.Skip("needs MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	dsn := dbtest.DSN(t, models.MySQL)
	// Port 1 on loopback refuses at once.
	dead := "root:@tcp(127.0.0.1:1)/x?timeout=1s"
	db, err := models.Open(models.MySQL, dead, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate over the second node: %v", err)
	}
	nodes := db.Nodes()
	if len(nodes) != 2 || nodes[0].InUse || nodes[0].Ready || nodes[0].State != "unreachable" || !nodes[1].InUse || !nodes[1].Ready {
		t.Fatalf("nodes %+v: want the first unreachable and the second in use", nodes)
	}
	if _, err := models.Open(models.SQLite, ":memory:", dsn); err == nil {
		t.Fatal("SQLite with failover nodes was accepted")
	}
}

// R51 on a Galera cluster (PVEBILL_TEST_GALERA_DSNS, comma-separated, as scripts/galera.sh dsns
// prints them): a node that is not Synced (here desynced on purpose) is left for the next one,
// and the pool comes back to it once it is Synced again.
func TestFailoverLeavesANodeThatIsNotSynced(t *testing.T) {
	t.Parallel()
	list := os.Getenv("PVEBILL_TEST_GALERA_DSNS")
	if list == "" {
		t.Skip("needs a Galera cluster (PVEBILL_TEST_GALERA_DSNS)")
	}
	dsns := strings.Split(list, ",")
	admin, err := models.Open(models.MySQL, dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	ctx := t.Context()
	conn, err := admin.Gorm.DB()
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := conn.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pinned.Close() }()
	db, err := models.Open(models.MySQL, dsns[0], dsns[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n := db.Nodes(); !n[0].InUse {
		t.Fatalf("nodes %+v: want the first in use", n)
	}
	if _, err := pinned.ExecContext(ctx, "SET GLOBAL wsrep_desync = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pinned.ExecContext(context.Background(), "SET GLOBAL wsrep_desync = OFF") })
	waitNode(t, db, 1)
	if n := db.Nodes(); n[0].Ready || n[0].State == "Synced" {
		t.Fatalf("nodes %+v: the desynced node is reported ready", n)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pinned.ExecContext(ctx, "SET GLOBAL wsrep_desync = OFF"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, db, 0)
}

func waitNode(t *testing.T, db *models.DB, want int) {
	t.Helper()
	poll.Until(t, 15*time.Second, fmt.Sprintf("node %d in use", want), func() bool { return db.Nodes()[want].InUse })
}
