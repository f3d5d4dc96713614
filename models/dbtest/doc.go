// Package dbtest opens real databases for tests: SQLite in a temporary file, and MariaDB/MySQL
// when PVEBILL_TEST_MYSQL_DSN is set (a DSN without a database name, e.g.
// "pvebill:pvebill@tcp(127.0.0.1:3306)/"). Each MySQL test gets a fresh database that is dropped
// afterwards. With PVEBILL_TEST_REQUIRE_MYSQL=1 a missing MySQL fails the test instead of skipping,
// and PVEBILL_TEST_MYSQL_MARKER names a file touched when a MySQL test ran (CI checks it). The
// user needs the PROCESS privilege besides its databases: one test reads InnoDB's lock waits.
//
// It is for tests only: no production package imports it.
package dbtest
