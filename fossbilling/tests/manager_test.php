<?php

// Server_Manager_Pvebill driven through its public methods exactly as FOSSBilling calls them,
// against a real `pvebill serve` and its Proxmox simulator.

declare(strict_types=1);

test('getForm names the manager; testConnection signs a read, a wrong secret is refused', function (): void {
    eq(true, is_string(Server_Manager_Pvebill::getForm()['label'] ?? null), 'label');
    eq(true, manager()->testConnection(), 'testConnection');
    $e = throws(static fn () => manager([], 'wrong-secret-0123456789abcdef-0000')->testConnection(), 'wrong secret');
    contains($e->getMessage(), 'signature_invalid', 'wrong secret');
    throws(static fn () => new Server_Manager_Pvebill(['username' => 'x', 'accesshash' => 'y']), 'no host');
});

test('container lifecycle: create, sync, suspend, unsuspend, change package, console, cancel', function (): void {
    $m = manager();
    $a = account(41, 'webct1', 'ct-2g', 'ct1.example.com');
    eq(true, $m->createAccount($a), 'createAccount');
    $s = service($a);
    $got = [$s['state'], $s['guest_type'], $s['hostname'], $s['plan']];
    eq(['active', 'container', 'ct1.example.com', 'ct-2g'], $got, 'service');
    eq(false, $m->synchronizeAccount($a)->getSuspended(), 'synchronized: not suspended');

    eq(true, $m->suspendAccount($a), 'suspendAccount');
    eq('suspended', service($a)['state'], 'state after suspend');
    eq(true, $m->synchronizeAccount($a)->getSuspended(), 'synchronized: suspended');
    $before = count(sim('GET', '/_sim/requests'));
    eq(true, $m->suspendAccount($a), 'suspendAccount again');
    $since = array_slice(sim('GET', '/_sim/requests'), $before);
    $changes = array_filter($since, static fn ($r) => $r['method'] !== 'GET');
    eq([], array_values($changes), 'a second suspend changes nothing on Proxmox');
    eq(true, $m->unsuspendAccount($a), 'unsuspendAccount');
    eq('active', service($a)['state'], 'state after unsuspend');

    $bigger = (new Server_Package())->setName('Flex')->setCustomValues(['plan' => 'flex-2g']);
    eq(true, $m->changeAccountPackage($a, $bigger), 'changeAccountPackage');
    eq('flex-2g', service($a)['plan'], 'plan after change');

    $url = $m->getLoginUrl($a);
    contains($url, '/console/', 'login URL');
    $page = file_get_contents($url, false, stream_context_create(['http' => ['ignore_errors' => true]]));
    contains((string) ($http_response_header[0] ?? ''), '200', 'console page status');
    contains((string) $page, '<html', 'console page');
    eq('', $m->getLoginUrl(null), 'login URL without an account');

    eq(true, $m->cancelAccount($a), 'cancelAccount');
    eq('terminated', service($a)['state'], 'state after cancel');
    eq(true, $m->cancelAccount($a), 'cancelAccount again');
});

test('change password: a container is refused permanently, translated, pointing to reinstall', function (): void {
    $a = account(42, 'webct2', 'ct-2g', 'ct2.example.com');
    eq(true, manager()->createAccount($a), 'createAccount');
    $e = throws(static fn () => manager(['language' => 'de'])->changeAccountPassword($a, 'New-Pass-4567'), 'container');
    contains($e->getMessage(), 'capability_refused, permanent', 'refusal');
    contains($e->getMessage(), 'Installieren Sie den Container neu', 'German reason');
    eq(true, manager()->cancelAccount($a), 'cancelAccount');
});

test('a VM\'s password goes through its guest agent; without the agent it is refused, temporarily', function (): void {
    $m = manager();
    $a = account(43, 'webvm1', 'vm-4g', 'vm1.example.com');
    eq(true, $m->createAccount($a), 'createAccount');
    $vmid = service($a)['vmid'];
    $set = '#^/nodes/[^/]+/qemu/' . $vmid . '/agent/set-user-password$#';
    eq(true, $m->changeAccountPassword($a, 'New-Pass-4567'), 'changeAccountPassword');
    $calls = simRequests('POST', $set);
    eq(1, count($calls), 'set-user-password calls');
    eq(['root', 'New-Pass-4567'], [$calls[0]['form']['username'][0], $calls[0]['form']['password'][0]], 'form');
    $ci = array_filter(
        simRequests('PUT', '#/qemu/' . $vmid . '/config$#'),
        static fn ($r) => ($r['form']['cipassword'][0] ?? '') === 'New-Pass-4567'
    );
    eq([], array_values($ci), 'no cipassword');

    sim('POST', '/_sim/guests/' . $vmid . '/agent', ['running' => false]);
    $fr = manager(['language' => 'fr']);
    $e = throws(static fn () => $fr->changeAccountPassword($a, 'Other-Pass-890'), 'agent off');
    contains($e->getMessage(), 'capability_refused, temporary', 'refusal');
    contains($e->getMessage(), 'agent invité', 'French reason');
    eq(1, count(simRequests('POST', $set)), 'nothing sent when the agent does not answer');
    sim('POST', '/_sim/guests/' . $vmid . '/agent', ['running' => true]);
    eq(true, $m->cancelAccount($a), 'cancelAccount');
});

test('a create retried after FOSSBilling timed out makes one guest, and succeeds only once it did', function (): void {
    $a = account(44, 'webct3', 'ct-2g', 'retry.example.com');
    sim('POST', '/_sim/task-duration', ['type' => 'vzcreate', 'duration' => '4s']);
    try {
        // FOSSBilling gives up after 1 s while pvebill holds the answer for 3 s.
        $e = throws(static fn () => manager(['timeout' => 1, 'wait' => 3])->createAccount($a), 'timed out');
        contains($e->getMessage(), 'no answer', 'time-out');
        sleep(3); // FOSSBilling's retry comes later
        eq(true, manager()->createAccount($a), 'the retry');
    } finally {
        sim('POST', '/_sim/task-duration', ['type' => 'vzcreate', 'duration' => '0s']);
    }
    $creates = array_filter(
        simRequests('POST', '#^/nodes/[^/]+/lxc$#'),
        static fn ($r) => ($r['form']['hostname'][0] ?? '') === 'retry.example.com'
    );
    eq(1, count($creates), 'Proxmox creates for the account');
    eq('active', service($a)['state'], 'state');
    eq(true, manager()->cancelAccount($a), 'cancelAccount');
});

test('a failed operation is a failure: a plan pvebill does not know is refused, translated', function (): void {
    $a = account(45, 'webct4', 'no-such-plan', 'bad.example.com');
    $e = throws(static fn () => manager(['language' => 'de'])->createAccount($a), 'unknown plan');
    contains($e->getMessage(), 'validation_failed', 'code');
    throws(static fn () => manager()->changeAccountDomain($a, 'x.example.com'), 'domain');
    throws(static fn () => manager()->changeAccountUsername($a, 'other'), 'username');
    throws(static fn () => manager()->changeAccountIp($a, '203.0.113.9'), 'ip');
});

test('an operation that fails in Proxmox is a failure, with pvebill\'s code, not a success', function (): void {
    $m = manager();
    $a = account(46, 'webct5', 'ct-2g', 'fail.example.com');
    eq(true, $m->createAccount($a), 'createAccount');
    $vmid = service($a)['vmid'];
    $stop = '/nodes/[^/]+/lxc/' . $vmid . '/status/(stop|shutdown)';
    $fault = ['method' => 'POST', 'path_pattern' => $stop, 'task_fail' => 'command failed: exit code 1'];
    sim('POST', '/_sim/faults', $fault);
    try {
        $e = throws(static fn () => $m->suspendAccount($a), 'failed suspend');
        contains($e->getMessage(), 'proxmox_task_failed', 'code');
    } finally {
        sim('DELETE', '/_sim/faults');
    }
    eq(false, $m->synchronizeAccount($a)->getSuspended(), 'not suspended');
    eq(true, $m->suspendAccount($a), 'suspendAccount once Proxmox works');
    eq(true, $m->cancelAccount($a), 'cancelAccount');
});
