<?php

// The client area as the customer reads it: the module's templates rendered with Smarty from the
// variables the module hands WHMCS, for a real service of `pvebill serve`, in English and in
// German: the module's own words come from its language files and pvebill's details arrive in
// the same language; buttons are Bootstrap 4, breadcrumbs name the service, times read alike.

declare(strict_types=1);

use Pvebill\Module;

test('render: the overview in English and German, Bootstrap 4 buttons, power forms with the token', function (): void {
    eq('success', module()->createAccount(renderParams('english')), 'CreateAccount');
    $pages = [];
    foreach (['english', 'german'] as $lang) {
        $out = module()->clientArea(renderParams($lang));
        eq(null, $out['templateVariables']['pvebill']['error'], $lang . ' overview');
        $pages[$lang] = render($out['tabOverviewReplacementTemplate'], $out['templateVariables']);
    }
    $en = visibleText($pages['english']);
    $de = visibleText($pages['german']);
    foreach (
        ['Start', 'Shut down', 'Reboot', 'Open console', 'Reinstall', 'Snapshots', 'Backups', 'Service', 'Monitoring',
        'Usage', 'Status Active', 'Power Running', 'Guest type Container', 'Memory', 'Network in', 'Last day'] as $t
    ) {
        contains($en, $t, 'the English overview');
    }
    foreach (
        ['Starten', 'Stoppen', 'Herunterfahren', 'Neu starten', 'Konsole öffnen', 'Neu installieren', 'Snapshots',
        'Backups', 'Dienst', 'Überwachung', 'Nutzung', 'Status Aktiv', 'Betriebszustand Läuft', 'Gasttyp Container',
        'Arbeitsspeicher', 'Netzwerk eingehend', 'Laufzeit', 'Letzter Tag', 'Woche'] as $t
    ) {
        contains($de, $t, 'the German overview');
    }
    foreach (
        ['Shut down', 'Reboot', 'Open console', 'Monitoring', 'Memory', 'Network in', 'Not available', 'Last day',
        'Plan limit', 'Received'] as $t
    ) {
        check(!str_contains($de, $t), 'English "' . $t . '" on the German overview');
    }
    $html = $pages['german'];
    check(!str_contains($html, 'btn-default'), 'btn-default renders as plain text in the Twenty-One theme');
    foreach (['btn btn-primary', 'btn btn-danger', 'btn btn-outline-secondary'] as $class) {
        contains($html, 'class="' . $class . '"', 'Bootstrap 4 buttons');
    }
    $powers = [];
    foreach (formsOf($html) as $f) {
        eq('post', $f['method'], 'every form of the overview is a POST');
        eq(generate_token('plain'), $f['hidden']['token'] ?? null, 'WHMCS\'s token in ' . $f['action']);
        contains($f['action'], '&id=' . RENDER_SERVICE . '&modop=custom&a=', 'form action');
        if (isset($f['hidden']['power'])) {
            $powers[] = $f['hidden']['power'];
        }
    }
    eq(['start', 'stop', 'shutdown', 'reboot'], $powers, 'the power buttons are forms');
    check(
        !preg_match('/href="[^"]*a=(Start|Stop|Shutdown|Reboot|Power|Console)\b/', $html),
        'no power or console link'
    );
});

test('render: snapshots, backups in German around German details; times alike; breadcrumbs with id', function (): void {
    $de = renderParams('german');
    $m = module();
    $page = $m->clientSnapshots($de, ['step' => 'create', 'name' => 'vorher', 'description' => 'vor dem Update']);
    eq([null, 'Der Snapshot wurde erstellt.'], [$page['vars']['error'], $page['vars']['message']], 'take a snapshot');
    assertBreadcrumb($page, 'snapshots');
    eq('Snapshots', $page['pagetitle'], 'title');
    $text = visibleText(render($page['templatefile'], $page['vars']));
    foreach (
        ['1 von 2 Snapshots belegt.', 'Name', 'Beschreibung', 'Erstellt', 'Löschen', 'Zurücksetzen',
        'Snapshot erstellen', 'Geben Sie zur Bestätigung seinen Namen ein'] as $t
    ) {
        contains($text, $t, 'the German snapshots page');
    }
    check(
        preg_match('/vorher vor dem Update (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/', $text, $taken) === 1,
        'the snapshot\'s time reads like a backup\'s: ' . $text
    );

    $bad = $m->clientSnapshots($de, ['step' => 'create', 'name' => 'has space']);
    $direct = api(
        'POST',
        '/v1/services/' . rawurlencode(sid(RENDER_SERVICE)) . '/snapshots',
        ['name' => 'has space'],
        'de'
    );
    eq(422, $direct->status, 'pvebill refuses the name');
    $text = visibleText(render($bad['templatefile'], $bad['vars']));
    contains($text, $direct->json['detail'], 'pvebill\'s German detail');
    contains($text, 'Snapshot erstellen', 'around German buttons');
    check($direct->json['detail'] !== api(
        'POST',
        '/v1/services/' . rawurlencode(sid(RENDER_SERVICE)) . '/snapshots',
        ['name' => 'has space'],
        'en'
    )->json['detail'], 'the detail is German, not English');

    $page = $m->clientBackups($de, ['step' => 'create']);
    eq([null, 'Das Backup wurde erstellt.'], [$page['vars']['error'], $page['vars']['message']], 'back up now');
    assertBreadcrumb($page, 'backups');
    $text = visibleText(render($page['templatefile'], $page['vars']));
    foreach (['Jetzt sichern', 'Erstellt', 'Größe', 'Geschützt', 'Nein', 'Wiederherstellen…', 'Löschen'] as $t) {
        contains($text, $t, 'the German backups page');
    }
    check(preg_match('/Geschützt (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/', $text) === 1, 'a backup\'s time: ' . $text);
    $html = render($page['templatefile'], $page['vars']);
    check(!str_contains($html, 'btn-default') && !str_contains($html, 'class="checkbox"'), 'Bootstrap 4 only');
    foreach (formsOf($html) as $f) {
        eq(['post', generate_token('plain')], [$f['method'], $f['hidden']['token'] ?? null], 'a form with the token');
    }

    $page = $m->clientBackups($de, ['step' => 'restore', 'backup_id' => $page['vars']['backups'][0]['id']]);
    $text = visibleText(render($page['templatefile'], $page['vars']));
    foreach (
        ['wiederherstellen', 'Einhängepunkt', 'Gelöscht: alles auf diesem Volume wird gelöscht',
            'Jetzt wiederherstellen',
        'Diese Snapshots werden mit dem Server gelöscht: vorher'] as $t
    ) {
        contains($text, $t, 'the German restore step');
    }

    $page = $m->clientReinstall($de, []);
    assertBreadcrumb($page, 'reinstall');
    $text = visibleText(render($page['templatefile'], $page['vars']));
    foreach (
        ['Neu installieren', 'Betriebssystem', 'Neues Root-Passwort', 'Jetzt neu installieren',
        'Mir ist bewusst, dass die als „Gelöscht“ markierten Daten und die aufgeführten Snapshots '
        . 'gelöscht werden.'] as $t
    ) {
        contains($text, $t, 'the German reinstall page');
    }

    eq('success', module()->suspendAccount(renderParams('german') + ['suspendreason' => 'Overdue']), 'SuspendAccount');
    Module::setInstance(module());
    try {
        $page = asRequest('POST', ['token' => generate_token('plain')], static fn () => pvebill_Console($de));
    } finally {
        Module::setInstance(null);
    }
    assertBreadcrumb($page, 'console');
    $text = visibleText(render($page['templatefile'], $page['vars']));
    contains($text, 'gesperrt', 'the console\'s refusal in German');
    contains($text, 'Übersicht', 'with a German way back');
    eq('success', module()->terminateAccount($de), 'TerminateAccount');
});
