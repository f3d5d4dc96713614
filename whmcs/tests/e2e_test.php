<?php

// The module's functions called with WHMCS-shaped $params against a real `pvebill serve` on the
// simulator (scripts/whmcs-test.sh starts it). Tests run in file order: the lifecycle tests
// share service 1001.

declare(strict_types=1);

use Pvebill\Lang;
use Pvebill\Module;
use Pvebill\Tests\MemoryHosting;
use Pvebill\Text;

test('TestConnection: signed, with the billing scope; a wrong secret is refused', function (): void {
    eq(['success' => true, 'error' => ''], module()->testConnection(whmcsParams(0)), 'good credentials');
    $bad = module()->testConnection(whmcsParams(0, ['serveraccesshash' => 'not-the-secret-123']));
    eq(false, $bad['success'], 'wrong secret');
    contains($bad['error'], '[signature_invalid]');
});

test('lifecycle: create ends with the guest running', function (): void {
    eq('success', module()->createAccount(whmcsParams(LIFECYCLE)), 'CreateAccount');
    $s = service(sid(LIFECYCLE));
    eq(
        ['active', 'running', 'container', 'web1001.example.com', 'ct-2g'],
        [$s['state'], $s['power'], $s['guest_type'], $s['hostname'], $s['plan']],
        'service'
    );
});

test('lifecycle: a repeated create is success and makes no second guest', function (): void {
    eq('success', module()->createAccount(whmcsParams(LIFECYCLE)), 'CreateAccount again');
    eq(
        1,
        count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['hostname' => 'web1001.example.com'])),
        'container creates'
    );
});

test('lifecycle: client area shows status and monitoring, "Not available" for nulls', function (): void {
    $out = module()->clientArea(whmcsParams(LIFECYCLE));
    eq('templates/clientarea.tpl', $out['tabOverviewReplacementTemplate'], 'template');
    $v = $out['templateVariables']['pvebill'];
    eq(null, $v['error'], 'error');
    eq('Active', $v['service']['status']['value'], 'status');
    eq('Running', $v['service']['power']['value'], 'power');
    eq(Text::NOT_AVAILABLE, $v['monitoring']['guest_agent']['value'], 'a container has no guest agent');
    // ct-2g has no backup storage: pvebill refuses backups for good, so there is no Backups button.
    $backup = api('GET', '/v1/plans/ct-2g')->json['plan']['capabilities']['container']['backup'];
    eq([false, 'permanent'], [$backup['available'], $backup['refusal']], 'ct-2g refuses backups');
    eq(
        ['Start', 'Stop', 'Shut down', 'Reboot', 'Open console', 'Reinstall', 'Snapshots'],
        array_column($v['buttons'], 'label'),
        'the buttons of a ct-2g container'
    );
    eq([null], array_unique(array_column($v['buttons'], 'reason')), 'none refused for now');
    $page = (string) file_get_contents(__DIR__ . '/../modules/servers/pvebill/templates/clientarea.tpl');
    check(
        !str_contains($page, 'a=Backups') && str_contains($page, '{foreach from=$pvebill.buttons'),
        'the overview draws only these buttons'
    );
    $raw = service(sid(LIFECYCLE))['monitoring'];
    foreach (
        ['cpu' => 'cpu', 'memory' => 'memory_bytes', 'disk' => 'disk_bytes',
        'swap' => 'swap_bytes'] as $key => $field
    ) {
        if ($raw[$field] === null) {
            eq(Text::NOT_AVAILABLE, $v['monitoring'][$key]['value'], $key . ' unknown');
        } else {
            check($v['monitoring'][$key]['value'] !== Text::NOT_AVAILABLE, $key . ' is known and must be shown');
        }
    }
});

test('lifecycle: suspend, suspend again (no-op), unsuspend', function (): void {
    $p = whmcsParams(LIFECYCLE, ['suspendreason' => 'Overdue on Invoice #12']);
    eq('success', module()->suspendAccount($p), 'SuspendAccount');
    $s = service(sid(LIFECYCLE));
    eq(['suspended', 'stopped'], [$s['state'], $s['power']], 'suspended');
    eq('success', module()->suspendAccount($p), 'SuspendAccount of a suspended service');
    eq('success', module()->unsuspendAccount($p), 'UnsuspendAccount');
    $s = service(sid(LIFECYCLE));
    eq(['active', 'running'], [$s['state'], $s['power']], 'unsuspended');
});

test('lifecycle: change package to the new product\'s plan', function (): void {
    eq('success', module()->changePackage(whmcsParams(LIFECYCLE, ['configoption1' => 'flex-2g'])), 'ChangePackage');
    eq('flex-2g', service(sid(LIFECYCLE))['plan'], 'plan');
});

test('lifecycle: power buttons stop, start, reboot, shut down; refusals are translated', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/reboot');
    // The buttons call the pvebill_* functions, which use Module::instance(): the test's module.
    Module::setInstance(module());
    try {
        powerButtons();
    } finally {
        Module::setInstance(null);
    }
});

test('lifecycle: snapshots: take, limit, roll back by the typed name, delete; reinstall lists them', function (): void {
    requireRoute('GET', '/v1/services/{service_id}/snapshots');
    $p = whmcsParams(LIFECYCLE);
    $m = module();
    $page = $m->clientSnapshots($p, []);
    eq('templates/snapshots', $page['templatefile'], 'template');
    eq(
        [[], 2, null],
        [$page['vars']['snapshots'], $page['vars']['max'], $page['vars']['error']],
        'empty list, the plan\'s limit'
    );
    $creates = static fn (): int => count(simRequests('POST', '#^/nodes/[^/]+/lxc/[0-9]+/snapshot$#'));
    $v = $m->clientSnapshots($p, ['step' => 'create', 'name' => 'first',
        'description' => 'before the upgrade'])['vars'];
    eq(['The snapshot was taken.', null], [$v['message'], $v['error']], 'create');
    eq(['first', 'before the upgrade'], [$v['snapshots'][0]['name'], $v['snapshots'][0]['description']], 'listed');
    contains(
        (string) $m->clientSnapshots($p, ['step' => 'create', 'name' => 'has space'])['vars']['error'],
        '[validation_failed]'
    );
    eq('success', $m->snapshotAction($p, 'create', 'second'), 'second');
    $sent = $creates();
    contains(
        (string) $m->clientSnapshots($p, ['step' => 'create', 'name' => 'third'])['vars']['error'],
        '[snapshot_limit_reached]'
    );
    eq($sent, $creates(), 'a create at the limit sends nothing to Proxmox');

    $rollbacks = static fn (): int => count(simRequests('POST', '#/snapshot/first/rollback$#'));
    $v = $m->clientSnapshots($p, ['step' => 'rollback', 'name' => 'first', 'confirm' => 'frist'])['vars'];
    contains((string) $v['error'], 'Type the name of the snapshot exactly');
    eq(0, $rollbacks(), 'a mistyped confirmation sends nothing');
    $v = $m->clientSnapshots($p, ['step' => 'rollback', 'name' => 'first', 'confirm' => 'first'])['vars'];
    eq(['The server was rolled back to the snapshot.', null], [$v['message'], $v['error']], 'rollback');
    eq(1, $rollbacks(), 'one rollback reached Proxmox');
    eq('running', service(sid(LIFECYCLE))['power'], 'running again after the rollback');

    $v = $m->clientSnapshots($p, ['step' => 'delete', 'name' => 'second'])['vars'];
    eq(['The snapshot was deleted.', ['first']], [$v['message'], array_column($v['snapshots'], 'name')], 'delete');

    // R44: the reinstall page names the snapshots the reinstall deletes.
    $out = $m->clientReinstall($p, []);
    eq(['first'], $out['vars']['snapshots'], 'reinstall preview lists the snapshot');
    eq('success', $m->snapshotAction($p, 'delete', 'first'), 'clean up');
});

test('lifecycle: "Open console" gets a one-time URL to the terminal page; refusals are translated', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/console');
    $p = whmcsParams(LIFECYCLE);
    $res = module()->openConsole($p);
    eq(null, $res['error'], 'no refusal');
    check(
        str_starts_with((string) $res['url'], server()['url'] . '/console/'),
        'a console URL under pvebill: ' . $res['url']
    );
    $ctx = stream_context_create(['http' => ['ignore_errors' => true]]);
    $page = (string) file_get_contents((string) $res['url'], false, $ctx);
    contains($page, 'assets/app/terminal.js', 'the terminal page');
    $again = module()->openConsole($p);
    check($again['url'] !== null && $again['url'] !== $res['url'], 'each press gets a new URL');
    eq(
        Module::consoleLink($p, false),
        $out = module()->clientArea($p)['templateVariables']['pvebill']['console_link'],
        'the overview links the Console button'
    );
    contains($out, 'modop=custom&a=Console', 'client area button');
    contains(module()->adminServicesTabFields($p)['pvebill console'], 'ac=AdminConsole', 'admin tab link');

    $de = whmcsParams(LIFECYCLE, ['clientsdetails' => ['language' => 'german'], 'suspendreason' => 'Overdue']);
    eq('success', module()->suspendAccount($de), 'SuspendAccount');
    Module::setInstance(module());
    try {
        $page = asRequest('POST', ['token' => generate_token('plain')], static fn () => pvebill_Console($de));
        contains($page['vars']['pvebill']['error'], '[service_suspended]', 'client button refusal');
        contains($page['vars']['pvebill']['error'], 'gesperrt', 'refusal in German');
        eq('templates/console', $page['templatefile'], 'the refusal page');
        contains(pvebill_AdminConsole($de), '"Open console" link', 'the admin button points to the link');
        $_GET['pvebill_console'] = '1';
        try {
            contains(pvebill_AdminConsole($de), '[service_suspended]', 'admin link refusal');
        } finally {
            unset($_GET['pvebill_console']);
        }
    } finally {
        Module::setInstance(null);
    }
    eq('success', module()->unsuspendAccount($p), 'UnsuspendAccount');
});

test('lifecycle: reinstall preview shows every mount\'s data label and fate', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/reinstall/preview');
    $out = module()->clientReinstall(whmcsParams(LIFECYCLE), []);
    eq('templates/reinstall', $out['templatefile'], 'template');
    $v = $out['vars'];
    eq(null, $v['error'], 'error');
    eq('preview_ready', $v['intent']['state'], 'intent state');
    check($v['mounts'] !== [], 'at least the root disk is listed');
    $root = $v['mounts'][0];
    eq('rootfs', $root['key'], 'first mount');
    eq('erased', $root['data'], 'root data');
    eq(Lang::named('english')->t('data_erased'), $root['data_label'], 'root data label');
    check($root['mount_after_label'] !== '', 'the mount fate is spelled out');
});

test('lifecycle: reinstall apply needs the confirmation, then succeeds', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/reinstall');
    $p = whmcsParams(LIFECYCLE);
    $preview = module()->clientReinstall($p, [])['vars']['intent'];
    $v = module()->clientReinstall($p, ['step' => 'confirm', 'intent_id' => $preview['id'],
        'root_password' => 'New-root-pass-1'])['vars'];
    contains((string) $v['error'], 'Tick the box');
    $v = module()->clientReinstall($p, ['step' => 'confirm', 'intent_id' => $preview['id'],
        'root_password' => 'New-root-pass-1', 'confirm' => '1'])['vars'];
    eq([null, true], [$v['error'], $v['done']], 'applied');
    $s = service(sid(LIFECYCLE));
    eq(['active', 'running'], [$s['state'], $s['power']], 'after the reinstall');
});

test('lifecycle: admin reinstall buttons (preview, tab with mounts, apply)', function (): void {
    requireRoute('POST', '/v1/services/{service_id}/reinstall');
    $p = whmcsParams(LIFECYCLE);
    eq('success', module()->adminReinstallPreview($p), 'preview button');
    $tab = module()->adminServicesTabFields($p)['pvebill reinstall'];
    contains($tab, 'preview_ready');
    contains($tab, Lang::named('english')->t('data_erased'));
    eq('success', module()->adminReinstallApply($p), 'apply button');
});

test('lifecycle: terminate, and terminate again', function (): void {
    eq('success', module()->terminateAccount(whmcsParams(LIFECYCLE)), 'TerminateAccount');
    eq('terminated', service(sid(LIFECYCLE))['state'], 'state');
    eq('success', module()->terminateAccount(whmcsParams(LIFECYCLE)), 'TerminateAccount of a terminated service');
});

test('a create that outlives the wait says "In progress"; the retry picks it up (one guest)', function (): void {
    sim('POST', '/task-duration', ['type' => 'vzcreate', 'duration' => '4s']);
    try {
        $attempts = tempFile();
        $p = whmcsParams(1002);
        $first = module(1, $attempts)->createAccount($p);
        contains($first, 'In progress');
        contains($first, 'Retry');
        // WHMCS's Module Queue retries later, in another PHP process: same attempt store.
        eq('success', module(30, $attempts)->createAccount($p), 'retry');
        eq(
            1,
            count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['hostname' => 'web1002.example.com'])),
            'container creates'
        );
        eq('active', service(sid(1002))['state'], 'state');
    } finally {
        sim('POST', '/task-duration', ['type' => 'vzcreate', 'duration' => '0s']);
    }
});

test('a suspend that outlives the wait: "In progress", then the retry finishes the same operation', function (): void {
    $vmid = service(sid(1002))['vmid'];
    foreach (['vzshutdown', 'vzstop'] as $t) {
        sim('POST', '/task-duration', ['type' => $t, 'duration' => '3s']);
    }
    try {
        $attempts = tempFile();
        $p = whmcsParams(1002);
        contains(module(1, $attempts)->suspendAccount($p), 'In progress');
        eq('success', module(30, $attempts)->suspendAccount($p), 'retry');
        eq('suspended', service(sid(1002))['state'], 'state');
        eq(1, count(simRequests('POST', '#^/nodes/[^/]+/lxc/' . $vmid . '/status/(shutdown|stop)$#')), 'stop requests');
    } finally {
        foreach (['vzshutdown', 'vzstop'] as $t) {
            sim('POST', '/task-duration', ['type' => $t, 'duration' => '0s']);
        }
    }
});

test('guest type chosen by a configurable option', function (): void {
    $p = whmcsParams(1006, ['configoption1' => 'flex-2g', 'configoption2' => 'option',
        'configoptions' => ['Guest Type' => 'Virtual machine', 'Operating System' => 'debian-12']]);
    eq('success', module()->createAccount($p), 'CreateAccount');
    eq('vm', service(sid(1006))['guest_type'], 'guest type');
    $v = module()->clientArea($p)['templateVariables']['pvebill'];
    eq('Virtual machine', $v['service']['guest_type']['value'], 'client area');
});

test('backups: list, back up now (vzdump with remove=0), usage counts them, delete', function (): void {
    $p = whmcsParams(1010, ['configoption1' => 'flex-2g', 'configoption2' => 'container']);
    eq('success', module()->createAccount($p), 'CreateAccount');
    $page = module()->clientBackups($p, []);
    eq('templates/backups', $page['templatefile'], 'template');
    eq([null, []], [$page['vars']['error'], $page['vars']['backups']], 'no backups yet');
    $page = module()->clientBackups($p, ['step' => 'create']);
    eq([null, 'The backup has been made.'], [$page['vars']['error'], $page['vars']['message']], 'back up now');
    eq(1, count($page['vars']['backups']), 'one backup listed');
    $buttons = module()->clientArea($p)['templateVariables']['pvebill']['buttons'];
    contains(implode(',', array_column($buttons, 'label')), 'Backups', 'flex-2g offers backups: the button is there');
    contains(implode(' ', array_column($buttons, 'href')), 'modop=custom&a=Backups', 'the Backups link');
    $dumps = simRequests(
        'POST',
        '#^/nodes/[^/]+/vzdump$#',
        [
            'remove' => '0',
            'notes-template' => 'pvebill-service: ' . getenv('PVEBILL_CLIENT') . '/' . sid(1010)
                . '\npvebill-backup: manual',
        ]
    );
    eq(1, count($dumps), 'one vzdump with remove=0 and the stamp');
    $hosting = new MemoryHosting();
    $hosting->add(1, 1010);
    eq('success', module(30, null, $hosting)->usageUpdate(whmcsParams(0)), 'UsageUpdate');
    $backups = api('GET', '/v1/services/' . rawurlencode(sid(1010)) . '/backups')->json['backups'];
    check(
        $hosting->rows['1/1010']['diskusage'] >= (int) round($backups[0]['size_bytes'] / 1048576),
        'diskusage ' . $hosting->rows['1/1010']['diskusage'] . ' does not count the backup'
    );
    $page = module()->clientBackups($p, ['step' => 'delete',
        'backup_id' => 'vzdump-lxc-1-2020_01_01-00_00_00.tar.zst']);
    contains((string) $page['vars']['error'], '[not_found]');
    $page = module()->clientBackups($p, ['step' => 'delete', 'backup_id' => $page['vars']['backups'][0]['id']]);
    eq(
        [null, 'The backup has been deleted.', []],
        [$page['vars']['error'], $page['vars']['message'], $page['vars']['backups']],
        'deleted'
    );
    eq('success', module()->terminateAccount($p), 'TerminateAccount');
});

test('restore: the confirmation step shows what is replaced, then the backup is restored', function (): void {
    $p = whmcsParams(1011, ['configoption1' => 'flex-2g', 'configoption2' => 'container']);
    eq('success', module()->createAccount($p), 'CreateAccount');
    $page = module()->clientBackups($p, ['step' => 'create']);
    eq(null, $page['vars']['error'], 'back up now');
    $id = $page['vars']['backups'][0]['id'];
    $page = module()->clientBackups($p, ['step' => 'restore',
        'backup_id' => 'vzdump-lxc-1-2020_01_01-00_00_00.tar.zst']);
    contains((string) $page['vars']['error'], '[not_found]');
    eq(null, $page['vars']['restore'], 'no confirmation step for a backup that is not the service\'s');
    $page = module()->clientBackups($p, ['step' => 'restore', 'backup_id' => $id]);
    eq([null, 'preview_ready', $id, []], [$page['vars']['error'], $page['vars']['restore']['state'],
        $page['vars']['restore']['backup_id'], $page['vars']['blockers']], 'confirmation step');
    eq(
        ['rootfs:erased'],
        array_map(fn ($m) => $m['key'] . ':' . $m['data'], $page['vars']['mounts']),
        'what the restore replaces'
    );
    eq(
        0,
        count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['restore' => '1'])),
        'nothing restored before the confirmation'
    );
    $intent = $page['vars']['restore']['id'];
    $page = module()->clientBackups($p, ['step' => 'restore_confirm', 'intent_id' => $intent]);
    contains((string) $page['vars']['error'], 'Tick the box');
    eq(0, count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['restore' => '1'])), 'nothing restored without the tick');
    $page = module()->clientBackups($p, ['step' => 'restore_confirm', 'intent_id' => $intent, 'confirm' => '1']);
    eq(
        [null, 'The server has been restored from the backup.'],
        [$page['vars']['error'], $page['vars']['message']],
        'restored'
    );
    eq(1, count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['restore' => '1', 'force' => '1',
        'ostemplate' => 'local:backup/' . $id])), 'one restore of that backup');
    eq('success', module()->terminateAccount($p), 'TerminateAccount');
});

test('UsageUpdate writes this month\'s usage and the limits in MB', function (): void {
    $p = whmcsParams(1003);
    eq('success', module()->createAccount($p), 'CreateAccount');
    $report = static function (): array {
        $to = gmdate('Y-m-d\TH:i:s\Z', time() + 1);
        $r = api(
            'GET',
            '/v1/usage?from=' . rawurlencode(gmdate('Y-m-01\T00:00:00\Z')) . '&to=' . rawurlencode($to)
                . '&service_id=' . rawurlencode(sid(1003))
        );
        eq(200, $r->status, 'usage ' . $r->body);
        return $r->json['services'][0] ?? [];
    };
    $deadline = time() + 20;
    while (($before = $report())['disk_max_bytes'] === null || ($before['netin_bytes'] ?? null) === null) {
        check(time() < $deadline, 'no usage sampled within 20 s: ' . json_encode($before));
        usleep(300000);
    }
    $hosting = new MemoryHosting();
    $hosting->add(1, 1003);
    $hosting->add(2, 1003);      // the same id on another server: not ours
    $hosting->add(1, 424242);    // a hosting row pvebill does not know
    eq('success', module(30, null, $hosting)->usageUpdate(whmcsParams(0)), 'UsageUpdate');
    $after = $report();
    $row = $hosting->rows['1/1003'];
    $mb = static fn ($b) => (int) round($b / 1048576);
    check(
        $row['diskusage'] >= $mb($before['disk_max_bytes']) && $row['diskusage'] <= $mb($after['disk_max_bytes']),
        'diskusage ' . $row['diskusage'] . ' outside ' . $mb($before['disk_max_bytes']) . '..'
            . $mb($after['disk_max_bytes'])
    );
    $bw = static fn (array $u) => $mb(($u['netin_bytes'] ?? 0) + ($u['netout_bytes'] ?? 0));
    check(
        $row['bwusage'] >= $bw($before) && $row['bwusage'] <= $bw($after),
        'bwusage ' . $row['bwusage'] . ' outside ' . $bw($before) . '..' . $bw($after)
    );
    eq(20 * 1024, $row['disklimit'], 'disklimit: the plan\'s 20 GiB');
    eq(2000 * 1024, $row['bwlimit'], 'bwlimit: the plan\'s 2000 GiB');
    check($row['lastupdate'] !== '', 'lastupdate is set');
    eq(0, $hosting->rows['2/1003']['diskusage'], 'another server\'s row is untouched');
    eq('', $hosting->rows['1/424242']['lastupdate'], 'an unknown row is untouched');
});

test('error texts: a refusal carries pvebill\'s translated detail and code', function (): void {
    $p = whmcsParams(1004, ['configoption3' => 'windows-95', 'clientsdetails' => ['language' => 'german']]);
    $body = module()->createBody($p);
    $direct = api('POST', '/v1/services', $body, 'de');
    eq(422, $direct->status, 'direct answer ' . $direct->body);
    $out = module()->createAccount($p);
    check($out !== 'success', 'a refused create is not success');
    contains($out, $direct->json['detail'], 'error text');
    contains($out, '[' . $direct->json['code'] . ']', 'error text');
    check(
        $direct->json['detail'] !== api('POST', '/v1/services', $body, 'en')->json['detail'],
        'the German detail differs from the English one'
    );

    $out = module()->changePackage(whmcsParams(LIFECYCLE + 100, ['configoption1' => 'no-such-plan']));
    contains($out, 'pvebill: ');
    check($out !== 'success', 'an unknown service is not success');
});

test('error texts: a failed operation names the failure and the operation', function (): void {
    sim(
        'POST',
        '/faults',
        ['method' => 'POST', 'path_pattern' => '/nodes/{node}/lxc', 'task_fail' => 'unable to create CT - disk full']
    );
    try {
        $out = module()->createAccount(whmcsParams(1005));
    } finally {
        sim('DELETE', '/faults');
    }
    contains($out, 'pvebill: the create failed: ');
    contains($out, '(operation ');
    check(preg_match('/\[[a-z_]+\]/', $out) === 1, 'the error code is given: ' . $out);
    // The next create is a new attempt: it runs again and succeeds.
    eq('success', module()->createAccount(whmcsParams(1005)), 'CreateAccount after the fault');
});

test('completion callbacks: every operation end reaches the module\'s receiver, verified, once', function (): void {
    $dir = getenv('PVEBILL_CALLBACK_DIR') ?: '';
    if ($dir === '') {
        skip('no callback receiver (PVEBILL_CALLBACK_DIR); run scripts/whmcs-test.sh');
    }
    $want = ['create', 'suspend', 'unsuspend', 'change_plan', 'terminate'];
    $deadline = microtime(true) + 15;
    do {
        $lines = array_map(
            static fn ($l) => json_decode($l, true),
            @file($dir . '/events.jsonl', FILE_IGNORE_NEW_LINES) ?: []
        );
        $actions = [];
        $failed = [];
        foreach ($lines as $l) {
            $op = $l['event']['operation'] ?? [];
            if (($op['service_id'] ?? '') === sid(LIFECYCLE) && $op['state'] === 'succeeded') {
                $actions[$op['action']] = true;
            }
            if (($op['service_id'] ?? '') === sid(1005) && $op['state'] === 'failed') {
                $failed[] = $op;
            }
        }
        if (array_diff($want, array_keys($actions)) === [] && $failed !== []) {
            break;
        }
        usleep(200000);
    } while (microtime(true) < $deadline);
    eq([], array_values(array_diff($want, array_keys($actions))), 'lifecycle events not received');
    $ids = [];
    foreach ($lines as $l) {
        eq(204, $l['status'], 'receiver answer (' . ($l['error'] ?? '') . ')');
        eq(server()['client'], $l['key'], 'X-Pvebill-Key');
        check(!$l['duplicate'], 'event ' . $l['event']['id'] . ' arrived twice');
        $ids[] = $l['event']['id'];
    }
    eq(count($ids), count(array_unique($ids)), 'distinct event ids');
    check($failed !== [], 'the failed create of the fault test is announced too');
    check(
        ($failed[0]['error']['code'] ?? '') !== '' && ($failed[0]['error']['detail'] ?? '') !== '',
        'a failure carries its code and detail'
    );
});
