<?php

// R58, R26: a reinstall taken over after its destroy, without SSH keys, waits in
// awaiting_password. The reinstall page asks the customer for a root password (not for a new
// preview) and sends the same apply again with it; pvebill never stores the password.

declare(strict_types=1);

use Pvebill\Lang;
use Pvebill\Tests\FakePvebill;

test('reinstall: an intent awaiting_password asks for the password and sends the apply again (R58)', function (): void {
    $fake = new FakePvebill();
    $p = $fake->params(91);
    $intent = ['id' => 'in-91', 'service_id' => 'whmcs-91', 'kind' => 'reinstall', 'state' => 'awaiting_password',
        'os' => 'debian-12', 'mounts' => [], 'snapshots' => [], 'blockers' => [],
        'confirmations' => [['key' => 'rootfs', 'volume' => 'local-lvm:vm-5001-disk-0']]];
    $fake->answer(200, ['intent' => $intent]);
    $page = module()->clientReinstall($p, []);
    $v = $page['vars'];
    $asks = Lang::named('english')->t('reinstall_awaiting_password');
    eq(['awaiting_password', $asks], [$v['intent']['state'], $v['message']], 'the page asks');
    $html = render($page['templatefile'], $v + ['token' => 't', 'serviceid' => 91]);
    contains($html, 'name="root_password"');
    contains($html, Lang::named('english')->t('send_password'));
    eq(['GET'], array_column($fake->requests(), 'method'), 'no new preview was asked for');

    $fake->answer(200, ['intent' => $intent]);
    $fake->answer(200, ['operation' => ['id' => 'op-91', 'service_id' => 'whmcs-91', 'action' => 'reinstall',
        'state' => 'succeeded', 'stage' => 'verify', 'resumed' => 1]]);
    $v = module()->clientReinstall($p, ['step' => 'confirm', 'confirm' => '1', 'intent_id' => 'in-91',
        'root_password' => 'Fresh-root-pass-9'])['vars'];
    eq([null, true], [$v['error'], $v['done']], 'finished');
    $sent = array_slice($fake->requests(), 1);
    eq(['GET', 'POST'], array_column($sent, 'method'), 'the intent read, then the apply');
    contains($sent[1]['uri'], '/v1/services/whmcs-91/reinstall');
    $body = json_decode($sent[1]['body'], true);
    eq(
        ['in-91', 'Fresh-root-pass-9', $intent['confirmations']],
        [$body['intent_id'], $body['root_password'], $body['confirmations']],
        'the same apply with the password'
    );
});
