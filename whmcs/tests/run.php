<?php

// The module's test runner (no Composer): loads the module as WHMCS would, runs every test in
// the *_test.php files of this folder in order, prints one line per test and, last and alone
// on its line, "N passed, M failed". Exits 1 when a test failed.
//
// Environment: PVEBILL_URL (a running `pvebill serve`), PVEBILL_CLIENT and PVEBILL_SECRET (an
// API client with the billing scope), PVEBILL_SIM_URL (its Proxmox simulator, for the control
// API). scripts/whmcs-test.sh starts the server and sets them; without them the tests that need
// a server are skipped. PVEBILL_TEST_FILTER runs only tests whose name contains it.

declare(strict_types=1);

error_reporting(E_ALL);
ini_set('display_errors', 'stderr');

require __DIR__ . '/bootstrap.php';

foreach (glob(__DIR__ . '/*_test.php') ?: [] as $file) {
    require $file;
}

exit(Pvebill\Tests\Harness::run(getenv('PVEBILL_TEST_FILTER') ?: '') ? 0 : 1);
