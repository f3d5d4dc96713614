<?php

// The client area's state changes are POSTs with WHMCS's CSRF token: a GET, a POST without the
// token and a POST with a wrong one change nothing, and the fake pvebill behind the module shows
// that no such request reached it. lib.php stands in for WHMCS's generate_token/check_token.

declare(strict_types=1);

use Pvebill\Module;
use Pvebill\Tests\FakePvebill;

test('CSRF: a GET, a POST without the token and one with a wrong token reach nothing (client area)', function (): void {
    $fake = new FakePvebill();
    Module::setInstance(module(5));
    try {
        foreach (clientForms() as $what => [$fn, $fields]) {
            $p = $fake->params(77, ['clientsdetails' => ['language' => 'german']]);
            $before = count($fake->requests());
            $out = asRequest('POST', $fields, static fn () => $fn($p));
            contains(refusal($out), 'Dieses Formular ist abgelaufen', $what . ' without a token');
            $out = asRequest('POST', $fields + ['token' => 'not-' . generate_token('plain')], static fn () => $fn($p));
            contains(refusal($out), 'Dieses Formular ist abgelaufen', $what . ' with a wrong token');
            $out = asRequest('POST', $fields + ['token' => ''], static fn () => $fn($p));
            contains(refusal($out), 'Dieses Formular ist abgelaufen', $what . ' with an empty token');
            eq($before, count($fake->requests()), $what . ': requests that reached pvebill');
            // A GET with the form's fields (and even the right token) in the query changes nothing either.
            asRequest('GET', [], static fn () => $fn($p), $fields + ['token' => generate_token('plain')]);
            eq([], changing(array_slice($fake->requests(), $before)), $what . ' as a GET: changing requests');
        }
    } finally {
        Module::setInstance(null);
    }
});

test('CSRF: the refused page says so in the customer\'s language and offers no form', function (): void {
    $fake = new FakePvebill();
    $p = $fake->params(77);
    $page = asRequest('POST', ['step' => 'create'], static fn () => pvebill_Backups($p));
    eq(true, $page['vars']['refused'], 'refused');
    $html = render($page['templatefile'], $page['vars']);
    contains($html, 'This form has expired or did not come from this page');
    check(!str_contains($html, 'name="step"'), 'no form on a refused page: ' . $html);
    eq([], $fake->requests(), 'nothing sent');
});

test('CSRF: with WHMCS\'s token the same forms reach pvebill', function (): void {
    $fake = new FakePvebill();
    Module::setInstance(module(5));
    try {
        $p = $fake->params(78);
        $token = ['token' => generate_token('plain')];
        $fake->answer(202, ['operation' => ['id' => 'op-1', 'state' => 'succeeded', 'action' => 'start']]);
        eq('success', asRequest('POST', ['power' => 'start'] + $token, static fn () => pvebill_Power($p)), 'Power');
        $sent = $fake->requests();
        eq(['POST'], array_column($sent, 'method'), 'one request');
        contains($sent[0]['uri'], '/v1/services/whmcs-78/start?wait=', 'the start route');
        check(($sent[0]['headers']['idempotency-key'] ?? '') !== '', 'with its Idempotency-Key');
        eq('pvebill: unknown power action', asRequest(
            'POST',
            ['power' => 'destroy'] + $token,
            static fn () => pvebill_Power($p)
        ), 'an action that is not a power action');
        eq(1, count($fake->requests()), 'an unknown action sends nothing');

        $fake->answer(
            409,
            ['code' => 'guest_not_running', 'detail' => 'The guest is not running.'],
            'application/problem+json'
        );
        $out = asRequest('POST', $token, static fn () => pvebill_Console($p));
        contains(refusal($out), '[guest_not_running]', 'Console');
        $fake->answer(202, ['operation' => ['id' => 'op-2', 'state' => 'succeeded', 'action' => 'backup']]);
        $fake->answer(200, ['backups' => []]);
        $out = asRequest('POST', ['step' => 'create'] + $token, static fn () => pvebill_Backups($p));
        eq([null, 'The backup has been made.'], [$out['vars']['error'], $out['vars']['message']], 'Backups create');
        eq(['POST', 'POST', 'POST', 'GET'], array_column($fake->requests(), 'method'), 'start, console, backup, list');
    } finally {
        Module::setInstance(null);
    }
});

test('CSRF: the templates post every change with the token; no GET link changes anything', function (): void {
    $root = __DIR__ . '/../modules/servers/pvebill/templates/';
    foreach (['clientarea', 'backups', 'snapshots', 'reinstall'] as $t) {
        $tpl = (string) file_get_contents($root . $t . '.tpl');
        $forms = preg_match_all('/<form\b[^>]*>/', $tpl, $m);
        check($forms > 0, $t . ' has forms');
        foreach ($m[0] as $form) {
            contains($form, 'method="post"', $t . ' form');
        }
        eq(
            $forms,
            substr_count($tpl, '<input type="hidden" name="token" value="{$token|escape}">'),
            $t . ': a token per form'
        );
        check(!preg_match('/href="[^"]*(step=|a=(Start|Stop|Shutdown|Reboot|Power))/', $tpl), $t . ': a changing link');
    }
});
