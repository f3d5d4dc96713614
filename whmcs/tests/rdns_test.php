<?php

// Reverse DNS in WHMCS (R55): the client area's page lists the service's addresses (IPv4, the
// IPv6 address, other named addresses of its prefix) with their names and states and sets one
// with a PUT; the overview shows the IPv6 prefix; the admin tab shows the prefix and the names.
// A fake pvebill scripts the answers of a service with both families; the real `pvebill serve`
// (no PowerDNS configured) shows the refusal, translated.

declare(strict_types=1);

use Pvebill\Module;
use Pvebill\Tests\FakePvebill;

test('rdns: the page sets a name with a PUT and lists every address, its name and state', function (): void {
    $fake = new FakePvebill();
    $p = $fake->params(82, ['clientsdetails' => ['language' => 'german']]);
    $fake->answer(200, ['rdns' => [rdnsRecords()['rdns'][1]]]);
    $fake->answer(200, rdnsService());
    $fake->answer(200, rdnsRecords());
    $set = ['step' => 'set', 'address' => '2001:db8::25', 'hostname' => 'v6.example.com'];
    $page = module(5)->clientReverseDns($p, $set);
    $sent = $fake->requests();
    eq(['PUT', 'GET', 'GET'], array_column($sent, 'method'), 'requests');
    eq('/v1/services/whmcs-82/rdns', $sent[0]['uri'], 'the PUT route');
    eq(
        ['address' => '2001:db8::25', 'hostname' => 'v6.example.com'],
        json_decode($sent[0]['body'], true),
        'the PUT body'
    );
    eq(null, $page['vars']['error'], 'no error');
    contains((string) $page['vars']['message'], 'sobald der DNS-Server antwortet', 'pending: saved, published later');
    eq([
        ['203.0.113.10', 'mail.example.com', 'Veröffentlicht'],
        ['2001:db8::1', '', 'Nicht gesetzt'],
        ['2001:db8::25', 'v6.example.com', 'Wartet auf den DNS-Server'],
    ], array_map(
        static fn (array $r): array => [$r['address'], $r['hostname'], $r['status']],
        $page['vars']['rows']
    ), 'rows');
    eq('Reverse-DNS', $page['pagetitle'], 'title');
    foreach (array_keys($page['breadcrumb']) as $link) {
        contains($link, '&id=82', 'breadcrumb');
    }
    $html = render($page['templatefile'], $page['vars']);
    $text = visibleText($html);
    foreach (
        ['IPv6-Präfix: 2001:db8::/64', 'Eine weitere Adresse Ihres IPv6-Präfixes 2001:db8::/64:', 'Speichern'] as $t
    ) {
        contains($text, $t, 'the German page');
    }
    $forms = formsOf($html);
    eq(4, count($forms), 'a form per address and one for another address of the prefix');
    foreach ($forms as $f) {
        eq('post', $f['method'], 'posted');
        eq(generate_token('plain'), $f['hidden']['token'] ?? null, 'with WHMCS\'s token');
        eq('set', $f['hidden']['step'] ?? null, 'step');
        contains($f['action'], '&id=82&modop=custom&a=ReverseDNS', 'action');
    }
    eq(['203.0.113.10', '2001:db8::1', '2001:db8::25'], array_values(array_filter(array_map(
        static fn (array $f): ?string => $f['hidden']['address'] ?? null,
        $forms
    ))), 'the address of each row is fixed in its form');
});

test('rdns: a synced PUT says published; a refusal is shown with pvebill\'s reason', function (): void {
    $fake = new FakePvebill();
    $p = $fake->params(83);
    $fake->answer(200, ['rdns' => [rdnsRecords()['rdns'][0]]]);
    $fake->answer(200, rdnsService());
    $fake->answer(200, rdnsRecords());
    $set = ['step' => 'set', 'address' => '203.0.113.10', 'hostname' => 'mail.example.com'];
    $page = module(5)->clientReverseDns($p, $set);
    eq('The reverse DNS name was saved and published.', $page['vars']['message'], 'synced');
    $refusal = ['code' => 'address_not_assigned', 'permanence' => 'permanent',
        'detail' => 'The address 198.51.100.7 is not assigned to this service.'];
    $fake->answer(422, $refusal, 'application/problem+json');
    $fake->answer(200, rdnsService());
    $fake->answer(200, rdnsRecords());
    $set = ['step' => 'set', 'address' => '198.51.100.7', 'hostname' => 'x.example.com'];
    $page = module(5)->clientReverseDns($p, $set);
    contains((string) $page['vars']['error'], 'is not assigned to this service. [address_not_assigned]', 'refused');
    eq(null, $page['vars']['message'], 'no message');
});

test('rdns: the overview shows the IPv6 prefix; the admin tab the prefix and each name', function (): void {
    $vars = Module::serviceVars(rdnsService()['service']);
    eq(['IPv6 prefix', '2001:db8::/64'], array_values($vars['service']['ip_prefix']), 'overview row');
    eq('Not available', Module::serviceVars(['ip_addresses' => []])['service']['ip_prefix']['value'], 'without one');
    $fake = new FakePvebill();
    $fake->answer(404, ['code' => 'not_found', 'detail' => 'No intent.'], 'application/problem+json');
    $fake->answer(200, rdnsService());
    $fake->answer(200, rdnsRecords());
    $tab = module(5)->adminServicesTabFields($fake->params(84));
    eq('2001:db8::/64', $tab['pvebill IPv6 prefix'] ?? null, 'the prefix');
    $names = $tab['pvebill reverse DNS'] ?? '';
    contains($names, '<li>203.0.113.10 → mail.example.com (Published)</li>', 'a published name');
    contains($names, '<li>2001:db8::1 → — (Not set)</li>', 'an address without a name');
    contains(
        $names,
        '2001:db8::25 → v6.example.com (Waiting for the DNS server): powerdns PATCH zone',
        'the last error'
    );
});

test('rdns: against pvebill without PowerDNS, the page says why in German', function (): void {
    $de = renderParams('german');
    eq('success', module()->createAccount($de), 'CreateAccount');
    $set = ['step' => 'set', 'address' => '192.0.2.1', 'hostname' => 'mail.example.com'];
    $page = module()->clientReverseDns($de, $set);
    contains(
        (string) $page['vars']['error'],
        'Reverse DNS ist nicht verfügbar: die Einstellung dns.powerdns ist nicht konfiguriert.',
        'refusal'
    );
    contains((string) $page['vars']['error'], '[capability_refused]', 'its code');
    $text = visibleText(render($page['templatefile'], $page['vars']));
    contains($text, 'Reverse-DNS', 'the German page');
});
