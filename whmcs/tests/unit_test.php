<?php

// Tests that need no server: signing, keys, request bodies from WHMCS's $params, formatting.

declare(strict_types=1);

use Pvebill\Client;
use Pvebill\FileAttemptStore;
use Pvebill\Lang;
use Pvebill\Module;
use Pvebill\Response;
use Pvebill\Tests\FakePvebill;
use Pvebill\Text;

test('signature equals the server\'s (vector from Go server.Sign)', function (): void {
    eq(
        'v1=f6f4fb89ad983fdd43172b33291928c46846a1c1e61c0ab16826ecf5ae1ea0f8',
        Client::sign('secret-0123456789', '1700000000', 'POST', '/v1/services?wait=5', '{"service_id":"whmcs-1042"}'),
        'signature'
    );
});

test('empty body is the empty JSON object, slashes unescaped', function (): void {
    eq('{}', Client::encode([]), 'empty');
    eq('{"volume":"local:vztmpl/x"}', Client::encode(['volume' => 'local:vztmpl/x']), 'slashes');
});

test('base URL from WHMCS server fields', function (): void {
    eq(
        'https://pvebill.example.com:8443',
        Client::baseUrl(['serverhostname' => 'pvebill.example.com', 'serversecure' => 'on', 'serverport' => '8443']),
        'secure'
    );
    eq(
        'http://10.0.0.5',
        Client::baseUrl(['serverhostname' => '', 'serverip' => '10.0.0.5', 'serversecure' => false]),
        'ip'
    );
    eq(
        'https://billing.example.com/pvebill',
        Client::baseUrl(['serverhostname' => 'https://billing.example.com/pvebill/']),
        'url'
    );
});

test('Idempotency-Key: stable for a retry, new for another attempt or another body', function (): void {
    $k = static fn (string $action, string $attempt, string $body, string $secret = 's3cret-0123456789') =>
        Module::idempotencyKey('whmcs-7', $action, $attempt, $body, $secret);
    $a = $k('create', 'abc', '{"root_password":"hunter2"}');
    eq($a, $k('create', 'abc', '{"root_password":"hunter2"}'), 'same attempt');
    check($a !== $k('create', 'abd', '{"root_password":"hunter2"}'), 'new attempt must change the key');
    check($a !== $k('create', 'abc', '{"root_password":"hunter3"}'), 'new body must change the key');
    check($a !== $k('suspend', 'abc', '{"root_password":"hunter2"}'), 'other action must change the key');
    check($a !== $k('create', 'abc', '{"root_password":"hunter2"}', 'other-secret-0123'), 'the digest is keyed');
    check(
        !str_contains($a, substr(hash('sha256', '{"root_password":"hunter2"}'), 0, 16)),
        'no plain digest of the body'
    );
    check(strlen($a) <= 255, 'the API takes at most 255 characters');
});

test('attempt store: open returns the same key until closed', function (): void {
    $f = tempFile();
    $s = new FileAttemptStore($f);
    $k = $s->open('whmcs-1', 'create');
    eq($k, (new FileAttemptStore($f))->open('whmcs-1', 'create'), 'after a restart');
    check($k !== $s->open('whmcs-1', 'suspend'), 'actions have their own attempts');
    $s->close('whmcs-1', 'create');
    check($k !== $s->open('whmcs-1', 'create'), 'a closed attempt must not come back');
});

test('create body from a WHMCS product with a fixed plan', function (): void {
    $m = module();
    $p = ['serviceid' => 1042, 'serverusername' => 'whmcs', 'domain' => 'Web1.Example.com', 'password' => 'pw-123456',
        'configoption1' => 'ct-2g', 'configoption2' => 'plan', 'configoption3' => 'debian-12',
        'customfields' => ['SSH Key' => "ssh-ed25519 AAAA one\r\n\nssh-ed25519 AAAA two\n"], 'configoptions' => []];
    eq(['service_id' => 'whmcs-1042', 'plan' => 'ct-2g', 'hostname' => 'web1.example.com', 'os' => 'debian-12',
        'root_password' => 'pw-123456', 'ssh_keys' => ['ssh-ed25519 AAAA one',
            'ssh-ed25519 AAAA two']], $m->createBody($p), 'body');
});

test('guest type and OS: fixed by the product or chosen by the customer', function (): void {
    $m = module();
    $base = ['serviceid' => 5, 'serverusername' => 'whmcs', 'domain' => '', 'password' => 'pw-123456',
        'configoption1' => 'flex-2g',
        'configoption3' => 'debian-12', 'customfields' => [], 'configoptions' => []];
    eq('vm', $m->createBody($base + ['configoption2' => 'vm'])['guest_type'], 'fixed vm');
    check(!isset($m->createBody($base + ['configoption2' => 'plan'])['guest_type']), 'plan: no guest_type sent');
    $opt = $base;
    $opt['configoption2'] = 'option';
    $opt['configoptions'] = ['Guest Type' => 'Virtual machine', 'Operating System' => 'ubuntu-24.04'];
    $b = $m->createBody($opt);
    eq('vm', $b['guest_type'], 'configurable option');
    eq('ubuntu-24.04', $b['os'], 'OS option overrides the default');
    eq('vps5', $b['hostname'], 'hostname when the domain is empty');
    $opt['configoptions'] = ['Guest Type' => 'container'];
    eq('container', $m->createBody($opt)['guest_type'], 'container option');
    try {
        $m->createBody(['configoption1' => ''] + $base);
        check(false, 'a product without plan must be refused');
    } catch (InvalidArgumentException $e) {
        contains($e->getMessage(), 'plan code');
    }
});

test('monitoring: unknown is "Not available", never zero; known zero stays zero', function (): void {
    $nulls = ['cpu' => null, 'memory_bytes' => null, 'memory_max_bytes' => null, 'disk_bytes' => null,
        'disk_max_bytes' => null,
        'swap_bytes' => null, 'swap_max_bytes' => null, 'netin_bytes' => null, 'netout_bytes' => null,
        'uptime_seconds' => null, 'guest_agent' => null];
    $v = Module::serviceVars(['state' => 'active', 'power' => 'unknown', 'guest_type' => 'container',
        'ip_addresses' => [], 'monitoring' => $nulls]);
    foreach ($v['monitoring'] as $key => $row) {
        eq(Text::NOT_AVAILABLE, $row['value'], $key);
    }
    eq(Text::NOT_AVAILABLE, $v['service']['power']['value'], 'power unknown');
    eq(Text::NOT_AVAILABLE, $v['service']['ip_addresses']['value'], 'no addresses');
    $known = ['cpu' => 0.25, 'memory_bytes' => 536870912, 'memory_max_bytes' => 2147483648, 'netin_bytes' => 0,
        'uptime_seconds' => 90061, 'guest_agent' => true] + $nulls;
    $v = Module::serviceVars(['state' => 'active', 'power' => 'running', 'guest_type' => 'vm', 'monitoring' => $known]);
    $value = static fn (string $k): string => $v['monitoring'][$k]['value'];
    eq('25.0 %', $value('cpu'), 'cpu');
    eq('512 MiB of 2.0 GiB', $value('memory'), 'memory');
    eq('0 B', $value('network_in'), 'a known zero');
    eq('1d 1h 1m', $value('uptime'), 'uptime');
    eq('Yes', $value('guest_agent'), 'agent');
    eq(['Active', 'Running', 'Virtual machine'], [$v['service']['status']['value'], $v['service']['power']['value'],
        $v['service']['guest_type']['value']], 'service values');
    $de = Module::serviceVars(['state' => 'suspended', 'power' => 'stopped', 'guest_type' => 'vm',
        'monitoring' => $known], Lang::named('german'));
    eq(
        ['Gesperrt', 'Gestoppt', 'Virtuelle Maschine', '512 MiB von 2.0 GiB', 'Ja', 'Nicht verfügbar'],
        [$de['service']['status']['value'], $de['service']['power']['value'], $de['service']['guest_type']['value'],
        $de['monitoring']['memory']['value'], $de['monitoring']['guest_agent']['value'],
        $de['monitoring']['disk']['value']],
        'the same in German'
    );
    eq(
        ['Status', 'Arbeitsspeicher'],
        [$de['service']['status']['label'], $de['monitoring']['memory']['label']],
        'labels'
    );
    $new = Module::serviceVars(['state' => 'hibernating', 'monitoring' => $nulls]);
    eq('hibernating', $new['service']['status']['value'], 'a state without a text is shown as pvebill says it');
});

test('wait budget stays below PHP\'s time limit', function (): void {
    $old = ini_get('max_execution_time');
    try {
        ini_set('max_execution_time', '0');
        eq(50, (new Module(new FileAttemptStore(tempFile()), null, 50))->waitBudget(), 'no limit: the cap');
        eq(60, (new Module(new FileAttemptStore(tempFile()), null, 500))->waitBudget(), 'never above the API\'s 60');
        ini_set('max_execution_time', '30');
        $_SERVER['REQUEST_TIME'] = time() - 5;
        $b = (new Module(new FileAttemptStore(tempFile()), null, 50, 10))->waitBudget();
        check($b <= 15 && $b >= 14, "30 s limit, 5 s spent, 10 s margin: budget $b");
        ini_set('max_execution_time', '8');
        eq(0, (new Module(new FileAttemptStore(tempFile()), null, 50, 10))->waitBudget(), 'no time left: no wait');
    } finally {
        ini_set('max_execution_time', (string) $old);
        $_SERVER['REQUEST_TIME'] = time();
    }
});

test('problem text: translated detail, field messages, blockers, code, temporary hint', function (): void {
    $r = new Response(409, ['content-type' => 'application/problem+json'], '', ['code' => 'blocked',
        'detail' => 'Der Dienst ist blockiert.',
        'permanence' => 'temporary', 'blockers' => [['code' => 'protection_enabled',
            'message' => 'Schutz ist aktiv.']]]);
    eq(
        'pvebill: Der Dienst ist blockiert. Schutz ist aktiv. [blocked] This is temporary: retry the action later.',
        Module::problemText($r),
        'text'
    );
});

test('MetaData, ConfigOptions and the button arrays', function (): void {
    $meta = pvebill_MetaData();
    eq(true, $meta['RequiresServer'], 'RequiresServer');
    eq(['Plan', 'Guest type', 'Operating system'], array_keys(pvebill_ConfigOptions()), 'configoption1..3');
    eq(
        ['Start', 'Stop', 'Shut down', 'Reboot', 'Open console', 'Reinstall: preview', 'Reinstall: apply'],
        array_keys(pvebill_AdminCustomButtonArray()),
        'admin buttons in the admin\'s language (English)'
    );
    $_SESSION['adminlang'] = 'french';
    try {
        eq(['Démarrer', 'Arrêter'], array_slice(array_keys(pvebill_AdminCustomButtonArray()), 0, 2), 'in French');
        $settings = array_keys(pvebill_ConfigOptions());
        eq(['Offre', 'Type d’invité', 'Système d’exploitation'], $settings, 'settings in French');
    } finally {
        unset($_SESSION['adminlang']);
    }
    eq(
        ['plan', 'container', 'vm', 'option'],
        array_keys(pvebill_ConfigOptions()['Guest type']['Options']),
        'guest type choices'
    );
    foreach (pvebill_AdminCustomButtonArray() + pvebill_ClientAreaAllowedFunctions() as $label => $fn) {
        check(function_exists('pvebill_' . $fn), "button $label calls pvebill_$fn, which must exist");
    }
});

test('client area buttons follow the plan\'s capabilities of the guest type', function (): void {
    $p = ['serviceid' => 42];
    $plan = ['capabilities' => [
        'container' => [
            'start' => ['available' => true], 'stop' => ['available' => true],
            'shutdown' => ['available' => true], 'reboot' => ['available' => true],
            'console' => ['available' => false, 'refusal' => 'permanent', 'reason' => 'Keine Konsole.'],
            'reinstall' => ['available' => true],
            'snapshot' => ['available' => false, 'refusal' => 'temporary', 'reason' => 'Speicher unbekannt.'],
            'backup' => ['available' => false, 'refusal' => 'permanent', 'reason' => 'Keine Sicherungen.'],
        ],
        'vm' => ['start' => ['available' => true], 'backup' => ['available' => true]],
    ]];
    $b = Module::buttons($p, $plan, 'container', null, false);
    eq(
        ['Start', 'Stop', 'Shut down', 'Reboot', 'Reinstall', 'Snapshots'],
        array_column($b, 'label'),
        'refused for good: hidden'
    );
    eq(
        [null, null, null, null, null, 'Speicher unbekannt.'],
        array_column($b, 'reason'),
        'refused for now: disabled, with the reason'
    );
    // Reverse DNS (R55) is no capability of the plan: a service with an address has the page.
    $withAddress = Module::buttons($p, $plan, 'container');
    eq(
        ['Reverse DNS', 'link', null, 'clientarea.php?action=productdetails&id=42&modop=custom&a=ReverseDNS'],
        [end($withAddress)['label'], end($withAddress)['method'], end($withAddress)['reason'],
            end($withAddress)['href']],
        'reverse DNS for a service with an address'
    );
    eq(
        ['clientarea.php?action=productdetails&id=42&modop=custom&a=Power', 'post', 'start'],
        [$b[0]['href'], $b[0]['method'], $b[0]['power']],
        'a power button posts to Power'
    );
    eq(
        ['post', 'post', 'post', 'post', 'link', 'link'],
        array_column($b, 'method'),
        'what changes something is posted'
    );
    eq(['btn btn-primary', 'btn btn-danger', 'btn btn-outline-secondary'], [$b[0]['class'], $b[1]['class'],
        $b[2]['class']], 'Bootstrap 4 classes');
    eq(
        ['Start', 'Backups'],
        array_column(Module::buttons($p, $plan, 'vm', null, false), 'label'),
        'the other guest type: its own set'
    );
    $all = Module::buttons($p, null, 'container');
    eq(count(Module::BUTTONS), count($all), 'plan unknown: every button, refused when pressed');
    eq(
        [true, Module::consoleLink($p, false), 'post'],
        [$all[4]['new_tab'], $all[4]['href'], $all[4]['method']],
        'the console is posted into a new tab'
    );
    eq(
        ['Power', 'Console', 'Reinstall', 'Snapshots', 'Backups', 'ReverseDNS'],
        array_values(pvebill_ClientAreaAllowedFunctions()),
        'the client area\'s functions: no GET-able Start, Stop, Shutdown or Reboot'
    );
    eq(
        ['Starten', 'Stoppen', 'Herunterfahren', 'Neu starten', 'Konsole öffnen', 'Neu installieren', 'Snapshots',
            'Backups', 'Reverse-DNS'],
        array_column(Module::buttons($p, null, 'container', Lang::named('german')), 'label'),
        'labelled in German'
    );
});

test('an unreachable server is a retry-safe error, not success', function (): void {
    $p = ['serviceid' => 9, 'serverusername' => 'whmcs', 'serveraccesshash' => 'secret-0123456789',
        'serverhostname' => '127.0.0.1',
        'serverport' => '1', 'configoption1' => 'ct-2g', 'configoption3' => 'debian-12', 'password' => 'pw-123456'];
    $out = module(2)->suspendAccount($p);
    contains($out, 'could not be reached');
    contains($out, 'Retrying is safe');
    $t = module()->testConnection($p);
    eq(false, $t['success'], 'TestConnection');
});

test('usage fields: unknown figures leave their columns; no allowance is WHMCS\'s 0 (unlimited)', function (): void {
    $f = Module::usageFields(['service_id' => 'whmcs-1', 'netin_bytes' => null, 'netout_bytes' => null,
        'disk_max_bytes' => null,
        'disk_limit_bytes' => null, 'bandwidth_limit_bytes' => null]);
    eq(['lastupdate', 'bwlimit'], array_keys($f), 'columns written');
    eq(0, $f['bwlimit'], 'bwlimit');
    $f = Module::usageFields(['netin_bytes' => 3 * 1048576, 'netout_bytes' => null, 'disk_max_bytes' => 1572864,
        'disk_limit_bytes' => 20 << 30, 'bandwidth_limit_bytes' => 2000 << 30]);
    eq([3, 2, 20480, 2048000], [$f['bwusage'], $f['diskusage'], $f['disklimit'], $f['bwlimit']], 'MB, rounded');
    $f = Module::usageFields(['disk_max_bytes' => 1572864, 'backup_bytes' => 3 * 1048576]);
    eq(5, $f['diskusage'], 'diskusage counts the backups too');
    $f = Module::usageFields(['disk_max_bytes' => null, 'backup_bytes' => 3 * 1048576]);
    eq(3, $f['diskusage'], 'backups alone when the disk is not known');
});

test('backup rows: date in UTC, size for people, protection', function (): void {
    $rows = Module::backupRows([['id' => 'vzdump-lxc-100-2026_01_31-02_00_05.tar.zst',
        'created_at' => '2026-01-31T02:00:05Z', 'size_bytes' => 3 * 1048576, 'protected' => true,
            'format' => 'tar.zst']]);
    eq([['id' => 'vzdump-lxc-100-2026_01_31-02_00_05.tar.zst', 'created' => '2026-01-31 02:00 UTC', 'size' => '3.0 MiB',
        'protected' => true]], $rows, 'rows');
    eq('Nicht verfügbar', Module::backupRows([['id' => 'x']], Lang::named('german'))[0]['created'], 'no time');
});

test('times: snapshots read like backups, in UTC whatever the offset pvebill gave', function (): void {
    eq('2026-01-31 02:00 UTC', Text::time('2026-01-31T02:00:05Z'), 'UTC');
    eq('2026-01-31 02:00 UTC', Text::time('2026-01-31T03:00:59+01:00'), 'an offset');
    eq(Text::NOT_AVAILABLE, Text::time(''), 'none');
    eq(Text::NOT_AVAILABLE, Text::time('yesterday-ish'), 'unreadable');
});

test('callback receiver: signature, timestamp window, event id, repeats', function (): void {
    $seen = [];
    $r = new Pvebill\CallbackReceiver(
        static fn (string $client): ?string => $client === 'whmcs' ? 'callback-secret-0123456789' : null,
        static function (string $id) use (&$seen): bool {
            $first = !isset($seen[$id]);
            $seen[$id] = true;
            return $first;
        },
    );
    $body = '{"id":"e1","type":"operation.finished","operation":{"id":"o1","service_id":"whmcs-7","action":"create",'
        . '"state":"failed","error":{"code":"proxmox_task_failed","detail":"The task failed."}},'
        . '"service":{"service_id":"whmcs-7"}}';
    $now = 1_700_000_000;
    $h = static fn (string $secret, int $ts, string $uri = '/cb.php?x=1') => ['x-pvebill-key' => 'whmcs',
        'x-pvebill-timestamp' => (string) $ts,
        'x-pvebill-signature' => Client::sign($secret, (string) $ts, 'POST', $uri, $body),
            'x-pvebill-event-id' => 'e1'];
    $ok = $r->handle('POST', '/cb.php?x=1', $h('callback-secret-0123456789', $now), $body, $now);
    eq([204, false], [$ok['status'], $ok['duplicate']], 'first delivery');
    eq(
        'pvebill: create of whmcs-7 failed (operation o1): The task failed. [proxmox_task_failed]',
        Pvebill\CallbackReceiver::describe($ok['event']),
        'log line'
    );
    eq(
        [204, true],
        array_values(array_intersect_key(
            $r->handle('POST', '/cb.php?x=1', $h('callback-secret-0123456789', $now), $body, $now),
            ['status' => 1, 'duplicate' => 1]
        )),
        'repeat'
    );
    eq(
        401,
        $r->handle('POST', '/cb.php?x=1', $h('wrong-secret-0123456789', $now), $body, $now)['status'],
        'wrong secret'
    );
    eq(
        401,
        $r->handle('POST', '/cb.php?x=2', $h('callback-secret-0123456789', $now), $body, $now)['status'],
        'other URI'
    );
    eq(
        401,
        $r->handle('POST', '/cb.php?x=1', $h('callback-secret-0123456789', $now), $body . ' ', $now)['status'],
        'changed body'
    );
    eq(
        'signature_expired',
        $r->handle('POST', '/cb.php?x=1', $h('callback-secret-0123456789', $now - 301), $body, $now)['error'],
        'old timestamp'
    );
    eq(
        401,
        $r->handle(
            'POST',
            '/cb.php?x=1',
            ['x-pvebill-key' => 'shop'] + $h('callback-secret-0123456789', $now),
            $body,
            $now
        )['status'],
        'unknown client'
    );
    eq(405, $r->handle('GET', '/cb.php?x=1', [], '', $now)['status'], 'GET');
});

test('callback receiver: an event the store could not record is answered 503, not acknowledged', function (): void {
    $stored = [];
    $fails = true;
    $r = new Pvebill\CallbackReceiver(
        static fn (string $client): ?string => 'callback-secret-0123456789',
        static function (string $id) use (&$stored, &$fails): bool {
            if ($fails) {
                throw new RuntimeException('SQLSTATE[HY000] [2002] Connection refused');
            }
            $first = !isset($stored[$id]);
            $stored[$id] = true;
            return $first;
        },
    );
    $body = '{"id":"e2","type":"operation.finished","operation":{"id":"o2","service_id":"whmcs-8",'
        . '"action":"suspend","state":"succeeded"}}';
    $now = 1_700_000_000;
    $h = ['x-pvebill-key' => 'whmcs', 'x-pvebill-timestamp' => (string) $now,
        'x-pvebill-signature' => Client::sign('callback-secret-0123456789', (string) $now, 'POST', '/cb.php', $body)];
    $down = $r->handle('POST', '/cb.php', $h, $body, $now);
    eq([503, null], [$down['status'], $down['event']], 'store down');
    contains((string) $down['error'], 'Connection refused');
    $fails = false;
    $again = $r->handle('POST', '/cb.php', $h, $body, $now);
    eq([204, false], [$again['status'], $again['duplicate']], 'the redelivery is the first one stored');
});

test('a request that cannot be encoded is a module error, not "unreachable"', function (): void {
    $p = ['serviceid' => 9, 'serverusername' => 'whmcs', 'serveraccesshash' => 'secret-0123456789',
        'serverhostname' => '127.0.0.1',
        'serverport' => '1', 'suspendreason' => "bad \xC3\x28 bytes"];
    $out = module(2)->suspendAccount($p);
    contains($out, 'pvebill module error: ');
});

test('backup delete: 204, or 202 with a backup_delete operation that is followed to its end', function (): void {
    $fake = new FakePvebill();
    $p = $fake->params(81);
    $fake->answer(204, '');
    eq('success', module(5)->deleteBackup($p, 'vzdump-lxc-100-2026_01_31-02_00_05.tar.zst'), '204');
    $fake->answer(202, ['operation' => ['id' => 'op-9', 'state' => 'running', 'action' => 'backup_delete']]);
    $fake->answer(200, ['operation' => ['id' => 'op-9', 'state' => 'succeeded', 'action' => 'backup_delete']]);
    eq('success', module(5)->deleteBackup($p, 'vzdump-lxc-100-2026_01_31-02_00_05.tar.zst'), '202, then succeeded');
    $fake->answer(202, ['operation' => ['id' => 'op-10', 'state' => 'failed', 'action' => 'backup_delete',
        'error' => ['code' => 'pve_task_failed', 'detail' => 'Das Archiv ist gesperrt.']]]);
    $out = module(5)->deleteBackup($p, 'vzdump-lxc-100-2026_01_31-02_00_05.tar.zst');
    contains($out, 'Das Archiv ist gesperrt. [pve_task_failed]', '202, then failed');
    $fake->answer(409, ['code' => 'backup_protected', 'detail' => 'Protected.'], 'application/problem+json');
    contains(module(5)->deleteBackup($p, 'x'), '[backup_protected]', 'a refusal');
    $sent = $fake->requests();
    eq(['DELETE', 'DELETE', 'GET', 'DELETE', 'DELETE'], array_column($sent, 'method'), 'requests');
    contains($sent[2]['uri'], '/v1/operations/op-9?wait=', 'the operation followed');
});
