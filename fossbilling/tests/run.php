<?php

// The FOSSBilling manager's test runner (no Composer): loads the stand-ins for FOSSBilling's
// classes and the manager as FOSSBilling's autoloader would, runs every test of the *_test.php
// files here in order, prints one line per test and, last, "N passed, M failed". Exits 1 when a
// test failed.
//
// Environment (scripts/fossbilling-test.sh sets it): PVEBILL_URL (a running `pvebill serve`),
// PVEBILL_CLIENT and PVEBILL_SECRET (an API client with the billing scope), PVEBILL_SIM_URL
// (its Proxmox simulator, for the control API). PVEBILL_TEST_FILTER runs only matching tests.

declare(strict_types=1);

error_reporting(E_ALL);
ini_set('display_errors', 'stderr');

require __DIR__ . '/bootstrap.php';
require __DIR__ . '/../library/Server/Manager/Pvebill.php';
require __DIR__ . '/lib.php';

foreach (glob(__DIR__ . '/*_test.php') ?: [] as $file) {
    require $file;
}

exit(Tests::run(getenv('PVEBILL_TEST_FILTER') ?: '') ? 0 : 1);
