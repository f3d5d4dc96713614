<?php

// The same Idempotency-Key sent again while the first request still runs, against the real
// server: pvebill holds the second request for a while, then answers 409
// idempotency_key_in_progress. The module must call that "In progress" and keep the attempt
// (and so the key) for WHMCS's Module Queue retry.

declare(strict_types=1);

use Pvebill\ErrorCode;
use Pvebill\Tests\ModuleLog;

test('the same key in flight on the real server: 409 idempotency_key_in_progress is "In progress"', function (): void {
    server();
    // The first create holds its request (and its key) for 16 s; pvebill holds a duplicate for 10 s.
    sim('POST', '/task-duration', ['type' => 'vzcreate', 'duration' => '16s']);
    try {
        $attempts = tempFile();
        $p = whmcsParams(1007);
        [$proc, $pipes] = startCreate($p, $attempts);
        $deadline = microtime(true) + 10;
        while (simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['hostname' => 'web1007.example.com']) === []) {
            check(microtime(true) < $deadline, 'the first create did not reach Proxmox');
            usleep(100000);
        }
        ModuleLog::$calls = [];
        $open = (string) file_get_contents($attempts);
        $second = module(1, $attempts)->createAccount($p);
        // The attempt stays open (the first process is still running and closes it when done).
        eq($open, (string) file_get_contents($attempts), 'the open attempts after the 409');
        $answers = array_column(
            array_filter(ModuleLog::$calls, static fn ($c) => $c['action'] === 'create'),
            'response'
        );
        eq(1, count($answers), 'create answers logged');
        $problem = json_decode((string) $answers[0], true);
        eq(
            [409, ErrorCode::IDEMPOTENCY_KEY_IN_PROGRESS],
            [$problem['status'] ?? null, $problem['code'] ?? null],
            'the server\'s answer'
        );
        contains($second, 'In progress');
        $first = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        proc_close($proc);
        eq('success', $first, 'the first create (' . $err . ')');
        eq('success', module(30, $attempts)->createAccount($p), 'retry');
        eq(
            1,
            count(simRequests('POST', '#^/nodes/[^/]+/lxc$#', ['hostname' => 'web1007.example.com'])),
            'container creates'
        );
    } finally {
        sim('POST', '/task-duration', ['type' => 'vzcreate', 'duration' => '0s']);
    }
});
