package models

import "gorm.io/gorm"

// SetIPAllocationHook installs f to run inside AllocateIP's transaction after an address was
// picked and before it is inserted, and returns a function that removes it.
func SetIPAllocationHook(f func(tx *gorm.DB, pool string, ip int64) error) (restore func()) {
	old := testHookBeforeInsert
	testHookBeforeInsert = f
	return func() { testHookBeforeInsert = old }
}
