package models_test

import (
	"strings"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R51: the migrated schema keeps Galera's rules: every table is InnoDB (Galera replicates
// nothing else) and has a primary key (rows without one cannot be certified or applied in
// parallel, and deletes of them replicate badly), and no migration takes a table lock or a
// named lock, which Galera does not replicate.
func TestSchemaFitsGalera(t *testing.T) {
	t.Parallel()
	if len(dbtest.Dialects(t)) < 2 {
		t.Skip("needs MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	db := dbtest.Open(t, models.MySQL)
	var rows []struct {
		TableName string
		Engine    string
		PK        int
	}
	err := db.Gorm.Raw(`SELECT t.table_name AS table_name, t.engine AS engine,
  (SELECT COUNT(*) FROM information_schema.table_constraints c
   WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY') AS pk
FROM information_schema.tables t WHERE t.table_schema = DATABASE() AND t.table_type = 'BASE TABLE'`).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 10 {
		t.Fatalf("only %d tables read: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if !strings.EqualFold(r.Engine, "InnoDB") {
			t.Errorf("table %s uses %s, not InnoDB", r.TableName, r.Engine)
		}
		if r.PK != 1 {
			t.Errorf("table %s has no primary key", r.TableName)
		}
	}
	migs, err := models.Migrations(models.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		up := strings.ToUpper(m.SQL)
		for _, bad := range []string{"LOCK TABLES", "GET_LOCK", "ENGINE=MYISAM", "ENGINE = MYISAM", "ENGINE=MEMORY", "ENGINE=ARIA", "CREATE TEMPORARY"} {
			if strings.Contains(up, bad) {
				t.Errorf("migration %s has %s, which Galera does not replicate", m.Name, bad)
			}
		}
	}
}
