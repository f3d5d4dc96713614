<?php

// The module's language files: every language has exactly the English keys, with the same
// placeholders; every text the module and its templates ask for exists; the client's language
// is found the way WHMCS hands it over, and English fills in.

declare(strict_types=1);

use Pvebill\Lang;
use Pvebill\Tests\FakePvebill;

test('lang: english and pvebill\'s eight other languages, each a WHMCS language name', function (): void {
    eq(
        ['dutch', 'english', 'french', 'german', 'italian', 'polish', 'portuguese-pt', 'spanish', 'turkish'],
        array_keys(langFiles()),
        'language files'
    );
    $locales = array_map(static fn ($f) => basename($f, '.json'), glob(__DIR__ . '/../../i18n/locales/*.json') ?: []);
    sort($locales);
    $codes = array_values(array_unique(array_map(static fn ($n) => Lang::CODES[$n] ?? '?', array_keys(langFiles()))));
    sort($codes);
    eq($locales, $codes, 'one language file for each language pvebill speaks (i18n/locales)');
});

test('lang: each file has exactly english.php\'s keys, the same placeholders, no empty text', function (): void {
    $en = Lang::read('english');
    check(count($en) > 50, 'english.php has ' . count($en) . ' texts');
    foreach (langFiles() as $name => $texts) {
        eq([], array_values(array_diff(array_keys($en), array_keys($texts))), $name . ': keys missing');
        eq(
            [],
            array_values(array_diff(array_keys($texts), array_keys($en))),
            $name . ': keys english.php does not have'
        );
        foreach ($texts as $key => $text) {
            check(is_string($text) && trim($text) !== '', $name . ': ' . $key . ' is empty');
            check(str_starts_with($key, 'pvebill_'), $name . ': ' . $key . ' lacks the module\'s prefix');
            eq(placeholders($en[$key]), placeholders($text), $name . ': placeholders of ' . $key);
        }
        if ($name !== 'english') {
            $same = array_keys(array_intersect_assoc($texts, $en));
            check(count($same) < count($en) / 4, $name . ': ' . count($same) . ' texts are the English ones');
        }
    }
});

test('lang: every text the templates and the module ask for is in english.php', function (): void {
    $en = Lang::read('english');
    $root = __DIR__ . '/../modules/servers/pvebill';
    $asked = [];
    foreach (glob($root . '/templates/*.tpl') ?: [] as $f) {
        preg_match_all('/\$_lang\.(pvebill_[a-z_]+)/', (string) file_get_contents($f), $m);
        $asked = array_merge($asked, $m[1]);
    }
    $code = '';
    foreach (array_merge([$root . '/pvebill.php'], glob($root . '/lib/*.php') ?: []) as $f) {
        $code .= file_get_contents($f);
    }
    preg_match_all('/->t\(\'([a-z_]*[a-z])\'[,)]/', $code, $m);
    foreach ($m[1] as $k) {
        $asked[] = 'pvebill_' . $k;
    }
    foreach (array_keys(Pvebill\Graph::RANGES) as $range) {
        $asked[] = 'pvebill_range_' . $range;
    }
    preg_match_all('/\'([a-z]+_(?:erased|untouched|excluded|recreated|removed|kept|created|deleted|restored|taken|'
        . 'rolled_back))\'/', $code, $m);
    foreach ($m[1] as $k) {
        $asked[] = 'pvebill_' . $k;
    }
    check(count(array_unique($asked)) > 40, 'found ' . count(array_unique($asked)) . ' texts asked for');
    eq([], array_values(array_diff(array_unique($asked), array_keys($en))), 'texts asked for but missing');
});

test('lang: the client\'s language from WHMCS, else the session\'s, else English', function (): void {
    $l = Lang::forClient(['clientsdetails' => ['language' => 'German']]);
    eq(['german', 'de', 'Starten'], [$l->name(), $l->code(), $l->t('start')], 'the client\'s setting');
    $l = Lang::forClient(['clientsdetails' => ['language' => 'portuguese-br']]);
    eq(['pt', 'Iniciar'], [$l->code(), $l->t('start')], 'Brazilian reads the Portuguese file');
    $l = Lang::forClient(['clientsdetails' => ['language' => 'swedish']]);
    eq(['english', 'en', 'Start'], [$l->name(), $l->code(), $l->t('start')], 'no file: English');
    eq('english', Lang::forClient(['clientsdetails' => ['language' => '../english']])->name(), 'no paths');
    $_SESSION['Language'] = 'turkish';
    try {
        eq(['tr', 'Başlat'], [Lang::forClient([])->code(), Lang::forClient([])->t('start')], 'the session\'s language');
        eq('de', Lang::forClient(['clientsdetails' => ['language' => 'german']])->code(), 'the client\'s comes first');
    } finally {
        unset($_SESSION['Language']);
    }
    eq('en', Lang::forClient([])->code(), 'nothing: English');
    eq('Erstellt', Lang::named('german')->t('created'), 'a key');
    eq(
        '3 von 5 Snapshots belegt.',
        Lang::named('german')->t('snapshots_used', ['count' => 3, 'max' => 5]),
        'placeholders'
    );
    eq('pvebill_no_such_text', Lang::named('german')->t('no_such_text'), 'a missing text shows its key');
});

test('lang: the language goes to pvebill as Accept-Language', function (): void {
    $fake = new FakePvebill();
    $fake->answer(200, ['service' => ['state' => 'active', 'power' => 'running', 'guest_type' => 'container']]);
    $fake->answer(404, ['code' => 'not_found', 'detail' => 'Plan nicht gefunden.'], 'application/problem+json');
    module()->clientArea($fake->params(5, ['clientsdetails' => ['language' => 'german']]));
    $sent = $fake->requests();
    check($sent !== [], 'no request reached the fake');
    foreach ($sent as $r) {
        eq('de', $r['headers']['accept-language'] ?? null, 'Accept-Language of ' . $r['uri']);
    }
});

test('lang: a German customer reads the module\'s own framing in German around pvebill\'s detail', function (): void {
    $fake = new FakePvebill();
    $de = $fake->params(90, ['clientsdetails' => ['language' => 'german']]);
    $fake->answer(503, ['code' => 'proxmox_unavailable', 'detail' => 'Proxmox ist nicht erreichbar.',
        'permanence' => 'temporary'], 'application/problem+json');
    $out = module(5)->powerAction($de, 'start');
    contains($out, 'Proxmox ist nicht erreichbar. [proxmox_unavailable] Das ist vorübergehend', 'a temporary refusal');
    $fake->answer(202, ['operation' => ['id' => 'op-3', 'state' => 'failed', 'action' => 'start',
        'error' => ['code' => 'proxmox_task_failed', 'detail' => 'Der Task ist fehlgeschlagen.']]]);
    $want = 'Die Aktion „start“ ist fehlgeschlagen: Der Task ist fehlgeschlagen. [proxmox_task_failed] (Vorgang op-3)';
    contains(module(5)->powerAction($de, 'start'), $want, 'a failed operation');
    $fake->answer(202, ['operation' => ['id' => 'op-4', 'state' => 'running', 'action' => 'backup',
        'stage' => 'dump']]);
    $fake->answer(200, ['backups' => []]);
    $page = module(0)->clientBackups($de, ['step' => 'create']);
    contains((string) $page['vars']['message'], 'In Bearbeitung: pvebill arbeitet noch an dieser Aktion (backup) '
        . '(Vorgang op-4, Schritt dump)', 'still running: news, not an error');
    eq(null, $page['vars']['error'], 'no error');
    $fake->answer(200, ['intent' => ['id' => 'i-7', 'state' => 'expired']]);
    $fake->answer(200, ['backups' => []]);
    $page = module(5)->clientBackups($de, ['step' => 'restore_confirm', 'intent_id' => 'i-7', 'confirm' => '1']);
    eq('pvebill: Diese Vorschau der Wiederherstellung ist expired und kann nicht ausgeführt werden; wählen Sie das '
        . 'Backup erneut.', $page['vars']['error'], 'a stale restore preview');
    $off = ['serverhostname' => '127.0.0.1', 'serverport' => '1'];
    contains(module(2)->powerAction($off + $de, 'stop'), 'pvebill war nicht erreichbar', 'unreachable');
    foreach ([$out, $page['vars']['message']] as $text) {
        foreach (['This is temporary', 'In progress', 'failed', 'could not be reached'] as $en) {
            check(!str_contains((string) $text, $en), 'English "' . $en . '" in ' . $text);
        }
    }
});
