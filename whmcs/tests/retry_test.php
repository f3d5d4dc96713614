<?php

// Retry safety against a scripted stand-in for pvebill: which answers keep the attempt (and so
// the Idempotency-Key) for WHMCS's Module Queue retry, and which end it.

declare(strict_types=1);

use Pvebill\Client;
use Pvebill\Tests\FakePvebill;

test('every request is signed over the URI and body it sends', function (): void {
    $f = new FakePvebill();
    $f->answer(200, op('succeeded'));
    eq('success', module(5)->suspendAccount($f->params(7, ['suspendreason' => 'Überfällig'])), 'SuspendAccount');
    $r = $f->requests()[0];
    eq('POST', $r['method'], 'method');
    eq('/v1/services/whmcs-7/suspend?wait=5', $r['uri'], 'request URI');
    eq('{"reason":"Überfällig"}', $r['body'], 'body');
    eq(
        Client::sign('fake-secret-0123456789', $r['headers']['x-pvebill-timestamp'], 'POST', $r['uri'], $r['body']),
        $r['headers']['x-pvebill-signature'],
        'signature'
    );
    eq('whmcs', $r['headers']['x-pvebill-key'], 'key');
});

test('a proxy\'s 502 keeps the attempt: the retry sends the same Idempotency-Key', function (): void {
    $f = new FakePvebill();
    $f->answer(502, '<html>Bad Gateway</html>');
    $f->answer(200, op('succeeded'));
    $m = module(5);
    $first = $m->suspendAccount($f->params(7));
    contains($first, 'HTTP 502');
    contains($first, 'temporary');
    eq('success', $m->suspendAccount($f->params(7)), 'retry');
    [$a, $b] = keys($f);
    eq($a, $b, 'the retry\'s key');
});

test('the same key still in flight is "In progress" and keeps the attempt', function (): void {
    $f = new FakePvebill();
    $f->answer(
        409,
        ['type' => 'x', 'title' => 'Conflict', 'status' => 409, 'code' => 'idempotency_key_in_progress',
        'detail' => 'A request with this key is still running.', 'permanence' => 'temporary'],
        'application/problem+json'
    );
    $f->answer(200, op('succeeded'));
    $m = module(5);
    contains($m->suspendAccount($f->params(7)), 'In progress');
    eq('success', $m->suspendAccount($f->params(7)), 'retry');
    [$a, $b] = keys($f);
    eq($a, $b, 'the retry\'s key');
});

test('a running operation is followed with ?wait and stays open for the retry', function (): void {
    $f = new FakePvebill();
    $f->answer(202, op('queued'));
    $f->answer(200, op('running'), null, 2); // held for the ?wait, still running
    $f->answer(202, op('queued'));           // the replay of the first answer
    $f->answer(200, op('succeeded'));
    $m = module(2);
    $first = $m->suspendAccount($f->params(7));
    contains($first, 'In progress');
    contains($first, '8a4b5a0e-4f7c-4d0a-9d55-0c7c1c1e2f10');
    eq('success', $m->suspendAccount($f->params(7)), 'retry');
    $uris = array_map(
        static fn ($r) => $r['method'] . ' ' . preg_replace('/wait=\d+/', 'wait=N', $r['uri']),
        $f->requests()
    );
    eq(
        ['POST /v1/services/whmcs-7/suspend?wait=N', 'GET /v1/operations/8a4b5a0e-4f7c-4d0a-9d55-0c7c1c1e2f10?wait=N',
        'POST /v1/services/whmcs-7/suspend?wait=N', 'GET /v1/operations/8a4b5a0e-4f7c-4d0a-9d55-0c7c1c1e2f10?wait=N'],
        $uris,
        'calls'
    );
    [$a, $b] = keys($f);
    eq($a, $b, 'the retry\'s key');
});

test('a refusal or a finished operation ends the attempt: the next call is a new request', function (): void {
    $f = new FakePvebill();
    $f->answer(
        409,
        ['type' => 'x', 'title' => 'Conflict', 'status' => 409, 'code' => 'service_locked',
        'detail' => 'Another operation is running on this service.', 'permanence' => 'temporary'],
        'application/problem+json'
    );
    $f->answer(200, op('failed') + []);
    $f->answer(200, op('succeeded'));
    $m = module(5);
    contains($m->suspendAccount($f->params(7)), '[service_locked]');
    check($m->suspendAccount($f->params(7)) !== 'success', 'a failed operation is not success');
    eq('success', $m->suspendAccount($f->params(7)), 'third');
    $k = keys($f);
    check($k[0] !== $k[1] && $k[1] !== $k[2], 'three different keys: ' . implode(', ', $k));
});
