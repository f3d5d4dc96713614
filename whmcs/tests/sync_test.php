<?php

// WHMCS's remaining hooks against a real `pvebill serve`: ChangePassword (R56), single sign-on
// to the console (R41), the Server Sync Tool's ListAccounts, and usage billing's MetricProvider
// (R59). Services 1040 (a VM) and 1041 (a container) are shared by the tests of this file.

declare(strict_types=1);

use Pvebill\Lang;
use Pvebill\MetricProvider;
use Pvebill\Tests\ModuleLog;
use WHMCS\UsageBilling\Contracts\Metrics\ProviderInterface;
use WHMCS\UsageBilling\Metrics\Units\GigaBytes;
use WHMCS\UsageBilling\Metrics\Units\MegaBytes;

test('ChangePassword: a VM\'s root password through its guest agent; the module log never holds it', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/password');
    eq('success', module()->createAccount(syncVm()), 'CreateAccount (VM)');
    eq('success', module()->createAccount(syncCt()), 'CreateAccount (container)');
    $password = 'Changed-Root-' . bin2hex(random_bytes(4));
    $before = agentPasswordCalls($password);
    $cipassword = count(simRequests('POST', '#/qemu/[0-9]+/config$#', []));
    ModuleLog::$calls = [];
    $out = withModule(static fn () => pvebill_ChangePassword(syncVm(['password' => $password])));
    eq('success', $out, 'ChangePassword');
    eq($before + 1, agentPasswordCalls($password), 'one set-user-password for root with the new password');
    foreach (array_slice(simRequests('POST', '#/qemu/[0-9]+/config$#', []), $cipassword) as $r) {
        check(!isset($r['form']['cipassword']), 'no cloud-init cipassword');
    }
    $logged = array_values(array_filter(ModuleLog::$calls, static fn ($c) => $c['action'] === 'password'));
    eq(1, count($logged), 'one log entry of the password call');
    $text = json_encode([$logged[0]['request'], $logged[0]['response']]);
    check(!str_contains($text, $password), 'the password in the logged request or answer');
    eq([$password], $logged[0]['replace'], 'the password is handed to WHMCS as a value to mask');
});

test('ChangePassword: a container is refused for good, a VM without its agent for now; translated', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/password');
    $password = 'Never-Set-' . bin2hex(random_bytes(4));
    $de = ['clientsdetails' => ['language' => 'german'], 'password' => $password];
    $out = withModule(static fn () => pvebill_ChangePassword(syncCt($de)));
    contains($out, '[capability_refused]', 'container');
    contains($out, 'Installieren Sie den Container neu', 'the reason in German');

    $vmid = (int) service(sid(SYNC_VM))['vmid'];
    sim('POST', '/guests/' . $vmid . '/agent', ['running' => false]);
    try {
        $out = withModule(static fn () => pvebill_ChangePassword(syncVm($de)));
        contains($out, '[capability_refused]', 'VM without agent');
        contains($out, 'Gast-Agent antwortet nicht', 'the reason in German');
        contains($out, Lang::named('german')->t('temporary'), 'temporary: the retry hint');
    } finally {
        sim('POST', '/guests/' . $vmid . '/agent', ['running' => true]);
    }
    eq(0, agentPasswordCalls($password), 'no set-user-password for a refusal');
    eq('pvebill: No new password was given.', module()->changePassword(syncVm(['password' => ''])), 'no password');
});

test('single sign-on: client and admin each get a fresh one-time URL that opens the console page', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/console');
    eq('success', module()->createAccount(syncCt()), 'CreateAccount (again: a no-op)');
    $meta = pvebill_MetaData();
    eq('Open console', $meta['ServiceSingleSignOnLabel'], 'client label');
    eq('Open console', $meta['AdminSingleSignOnLabel'], 'admin label');
    $urls = [];
    foreach (['pvebill_ServiceSingleSignOn', 'pvebill_AdminSingleSignOn'] as $fn) {
        $res = withModule(static fn () => $fn(syncCt()));
        eq(true, $res['success'], $fn . ' ' . json_encode($res));
        check(str_starts_with($res['redirectTo'], server()['url'] . '/console/'), $fn . ' URL ' . $res['redirectTo']);
        [$status, $page] = httpGet($res['redirectTo']);
        eq(200, $status, $fn . ': the console page');
        contains($page, 'assets/app/terminal.js', $fn . ': the terminal page');
        $urls[] = $res['redirectTo'];
    }
    check($urls[0] !== $urls[1], 'each sign-on gets a new URL');

    eq('success', module()->suspendAccount(syncCt()), 'SuspendAccount');
    try {
        $de = syncCt(['clientsdetails' => ['language' => 'german']]);
        $res = withModule(static fn () => pvebill_ServiceSingleSignOn($de));
        eq(false, $res['success'], 'suspended: no URL');
        contains($res['errorMsg'], '[service_suspended]', 'client refusal');
        contains($res['errorMsg'], 'gesperrt', 'in the client\'s German');
        $_SESSION['adminlang'] = 'french';
        try {
            $res = withModule(static fn () => pvebill_AdminSingleSignOn(syncCt()));
        } finally {
            unset($_SESSION['adminlang']);
        }
        eq(false, $res['success'], 'admin: suspended');
        contains($res['errorMsg'], '[service_suspended]', 'admin refusal');
        contains($res['errorMsg'], 'suspendu', 'in the admin\'s French');
    } finally {
        eq('success', module()->unsuspendAccount(syncCt()), 'UnsuspendAccount');
    }
});

test('ListAccounts: every service of the client exactly once, over several pages, mapped for WHMCS', function (): void {
    requireRoute('GET', '/v1/services');
    $r = api('GET', '/v1/services?limit=1000');
    eq(200, $r->status, 'GET /v1/services ' . $r->body);
    eq(null, $r->json['next_cursor'], 'one page of 1000 holds them all');
    $want = [];
    foreach ($r->json['services'] as $s) {
        $want[$s['service_id']] = $s;
    }
    check(count($want) > 6, 'more services than three pages of 2: ' . count($want));

    $paged = module()->listAccounts(whmcsParams(0), 2);
    eq(true, $paged['success'], 'ListAccounts ' . json_encode($paged));
    $ids = array_column($paged['accounts'], 'uniqueIdentifier');
    eq(count($ids), count(array_unique($ids)), 'no service twice');
    $sorted = $ids;
    sort($sorted);
    $keys = array_keys($want);
    sort($keys);
    eq($keys, $sorted, 'every service listed');
    eq($paged, withModule(static fn () => pvebill_ListAccounts(whmcsParams(0))), 'pvebill_ListAccounts, pages of 1000');

    $status = ['active' => 'Active', 'suspended' => 'Suspended', 'limited' => 'Suspended', 'terminated' => 'Terminated',
        'failed' => 'Terminated', 'provisioning' => 'Pending', 'needs_reconciliation' => 'Active'];
    $seen = [];
    foreach ($paged['accounts'] as $a) {
        $s = $want[$a['uniqueIdentifier']];
        eq(
            ['', '', $s['hostname'], $s['plan'], $s['ip_addresses'][0] ?? '', $status[$s['state']],
                gmdate('Y-m-d H:i:s', strtotime($s['created_at']))],
            [$a['email'], $a['username'], $a['domain'], $a['product'], $a['primaryip'], $a['status'], $a['created']],
            'account ' . $a['uniqueIdentifier']
        );
        $seen[$a['status']] = true;
    }
    check(isset($seen['Active'], $seen['Terminated']), 'active and terminated services: ' . json_encode($seen));
    $ct = $paged['accounts'][array_search(sid(SYNC_CT), $ids, true)];
    eq(['web1041.example.com', 'ct-2g', 'Active'], [$ct['domain'], $ct['product'], $ct['status']], 'the container');
    check(preg_match('/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/', $ct['created']) === 1, 'created as WHMCS dates it');
    $meta = pvebill_MetaData();
    eq('uniqueIdentifier', $meta['ListAccountsUniqueIdentifierField'], 'the unique identifier field');
    eq('configoption1', $meta['ListAccountsProductField'], 'the product field: the plan');
});

test('MetricProvider: this month\'s figures of /v1/usage, unchanged but for GB and MB (R59)', function (): void {
    eq('success', module()->createAccount(syncCt()), 'CreateAccount (again: a no-op)');
    $sid = sid(SYNC_CT);
    $deadline = time() + 20;
    $from = gmdate('Y-m-01\T00:00:00\Z');
    // Traffic is known once two samples are folded, and grows once they are a second of uptime
    // apart (the simulator's counters move each second): wait for both.
    while (
        (($u = usageOf($sid, $from, gmdate('Y-m-d\TH:i:s\Z', time() + 1)))['netin_bytes'] ?? 0) <= 0
        || $u['memory_avg_bytes'] === null
    ) {
        check(time() < $deadline, 'no usage sampled within 20 s: ' . json_encode($u));
        usleep(300000);
    }
    check(pvebill_MetricProvider(whmcsParams(0)) instanceof ProviderInterface, 'a WHMCS ProviderInterface');
    $p = new MetricProvider(whmcsParams(0), getenv('PVEBILL_TEST_TRANSPORT') ?: 'auto', time() + 1);
    [$pFrom, $pTo] = $p->period();
    eq($from, $pFrom, 'the period starts with the month');
    // Sampling goes on: compare when the report did not change around the provider's read.
    for ($i = 0;; $i++) {
        check($i < 20, 'the usage report never held still');
        $a = usageOf($sid, $pFrom, $pTo);
        $tenant = $p->tenantUsage($sid);
        $all = $p->usage();
        if ($a === usageOf($sid, $pFrom, $pTo)) {
            break;
        }
    }
    $compared = 0;
    // The test's own table: metric, the report's field, bytes a unit (GB = 2^30, MB = 2^20).
    $want = ['traffic_in' => ['netin_bytes', 2 ** 30], 'traffic_out' => ['netout_bytes', 2 ** 30],
        'backup_storage' => ['backup_bytes', 2 ** 30], 'memory_avg' => ['memory_avg_bytes', 2 ** 20],
        'swap_avg' => ['swap_avg_bytes', 2 ** 20]];
    foreach ($want as $name => [$field, $size]) {
        if ($a[$field] === null) {
            check(!isset($tenant[$name]), $name . ': unknown is left out, never 0');
            continue;
        }
        eq((float) ($a[$field] / $size), $tenant[$name]->usage()->value(), $name);
        eq($tenant[$name]->usage()->value(), $all[$sid][$name]->usage()->value(), $name . ' in usage()');
        eq(strtotime($pTo), $tenant[$name]->usage()->endAt(), $name . ' period end');
        $compared++;
    }
    check($compared >= 4, 'traffic in and out, memory and swap compared: ' . $compared);
    check($a['netin_bytes'] > 0, 'traffic was sampled');
    eq([], $p->tenantUsage('no-such-service'), 'an unknown tenant');

    $metrics = $p->metrics();
    eq(['traffic_in', 'traffic_out', 'backup_storage', 'memory_avg', 'swap_avg'], array_keys($metrics), 'metrics');
    foreach (['traffic_in', 'traffic_out', 'backup_storage'] as $n) {
        check($metrics[$n]->units() instanceof GigaBytes, $n . ' in GB');
    }
    foreach (['memory_avg', 'swap_avg'] as $n) {
        check($metrics[$n]->units() instanceof MegaBytes, $n . ' in MB');
    }
    eq('month', $metrics['traffic_in']->type(), 'traffic per month');
    eq('snapshot', $metrics['backup_storage']->type(), 'backup storage as it is now');
    eq('Traffic in', $metrics['traffic_in']->displayName(), 'English name');
    $_SESSION['adminlang'] = 'german';
    try {
        eq('Eingehender Datenverkehr', $p->metrics()['traffic_in']->displayName(), 'in the admin\'s German');
    } finally {
        unset($_SESSION['adminlang']);
    }
});

test('MetricProvider: the module defines none of WHMCS\'s classes', function (): void {
    foreach (glob(__DIR__ . '/../modules/servers/pvebill/{,lib/}*.php', GLOB_BRACE) ?: [] as $f) {
        check(!preg_match('/^namespace\s+WHMCS\b/m', (string) file_get_contents($f)), basename($f) . ' declares WHMCS');
    }
});
