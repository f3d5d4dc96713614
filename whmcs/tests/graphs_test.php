<?php

// The client area's usage graphs: inline SVG drawn by the module (Graph.php), parsed back with
// DOMDocument. The first tests draw fixed points; the last ones draw a real service's series from
// `pvebill serve` and hold each graph to the series endpoint's own answer for the same period.

declare(strict_types=1);

use Pvebill\Client;
use Pvebill\Graph;

test('graphs: a series with gaps is drawn as broken polylines, the plan limit as a line, labelled', function (): void {
    $t0 = 1764547200; // 2025-12-01T00:00:00Z
    $mib = 1048576;
    $vals = [100, 200, null, 300, 400, 500, null, null, 600, null, 700, 800];
    $points = [];
    foreach ($vals as $i => $v) {
        $points[] = ['t' => $t0 + $i * 600, 'v' => $v === null ? null : (float) $v * $mib];
    }
    $d = svgDom(Graph::svg('Memory, last day', 'bytes', [['label' => 'Memory',
        'points' => $points]], 2048.0 * $mib, $t0, $t0 + 86400));
    $lines = svgClass($d, 'series');
    eq(
        [2, 3, 2],
        array_map(static fn ($pl) => count(explode(' ', $pl->getAttribute('points'))), $lines),
        'runs between the gaps'
    );
    eq(1, count(svgClass($d, 'point')), 'the known value between two gaps is a dot');
    eq(8, drawnPoints($d), 'every known value is drawn once');
    $limit = svgClass($d, 'limit');
    eq(1, count($limit), 'one limit line');
    eq(['Plan limit 2 GiB'], svgTexts($d, 'limit-label'), 'limit label');
    $ys = svgTexts($d, 'y-tick');
    eq('0 B', $ys[0], 'the y axis starts at zero');
    eq('2 GiB', lastOf($ys), 'the y axis ends at a round value at or above the limit');
    // The limit is the top tick here: the limit line lies on the top grid line.
    $grid = svgClass($d, 'grid');
    eq(lastOf($grid)->getAttribute('y1'), $limit[0]->getAttribute('y1'), 'the limit at 2 GiB');
    // x ticks every 4 hours of a UTC day
    eq(['00:00', '04:00', '08:00', '12:00', '16:00', '20:00', '00:00'], svgTexts($d, 'x-tick'), 'time ticks');
    $svg = $d->documentElement;
    eq('0 0 480 240', $svg->getAttribute('viewBox'), 'viewBox');
    eq('100%', $svg->getAttribute('width'), 'the graph takes the width it is given (a phone\'s screen)');
    assertSelfContained($d);
});

test('graphs: units are humanised (per cent, bytes per second) and every text is escaped', function (): void {
    $t0 = 1764547200;
    $cpu = [['t' => $t0, 'v' => 0.05], ['t' => $t0 + 3600, 'v' => 0.374]];
    $d = svgDom(Graph::svg('CPU <script>alert("x")</script> & "co"', 'ratio', [['label' => 'CPU',
        'points' => $cpu]], null, $t0, $t0 + 7 * 86400));
    eq('CPU <script>alert("x")</script> & "co"', svgTexts($d, 'title')[0], 'the title is text, not markup');
    eq(0, $d->getElementsByTagName('script')->length, 'no script element');
    foreach (svgTexts($d, 'y-tick') as $label) {
        check(str_ends_with($label, ' %'), 'CPU tick ' . $label . ' in per cent');
    }
    eq('40 %', lastOf(svgTexts($d, 'y-tick')), 'top of a 37.4 % peak');
    eq(0, count(svgClass($d, 'limit')), 'no limit line without a limit');
    eq(
        ['12-01', '12-02', '12-03', '12-04', '12-05', '12-06', '12-07', '12-08'],
        svgTexts($d, 'x-tick'),
        'a week: one tick a day, as month-day numbers in every language'
    );

    $net = [['label' => 'Received <b>', 'points' => [['t' => $t0, 'v' => 1536.0], ['t' => $t0 + 60, 'v' => 3000.0]]],
        ['label' => 'Sent', 'points' => [['t' => $t0, 'v' => null], ['t' => $t0 + 60, 'v' => null]]]];
    $d = svgDom(Graph::svg('Network', 'bytes_per_second', $net, null, $t0, $t0 + 30 * 86400));
    eq(['Received <b>', 'Sent'], svgTexts($d, 'legend'), 'legend, escaped');
    eq('3 KiB/s', lastOf(svgTexts($d, 'y-tick')), 'bytes per second, binary units');
    eq(2, drawnPoints($d), 'an all-unknown series draws nothing');
    assertSelfContained($d);

    $d = svgDom(Graph::svg('Swap', 'bytes', [['label' => 'Swap', 'points' => [['t' => $t0,
        'v' => null]]]], null, $t0, $t0 + 86400));
    eq(['No data for this period'], svgTexts($d, 'empty'), 'nothing known: said so, no zero line');
    eq(0, drawnPoints($d), 'no points');
});

/** The module's graphs of a real service for each period, each held to the series endpoint. */
test('graphs: a real service\'s day, week and month from pvebill serve, limits from its plan', function (): void {
    $p = whmcsParams(GRAPHS_SERVICE);
    eq('success', module()->createAccount($p), 'CreateAccount');
    requireRoute('GET', '/v1/services/{service_id}/usage/series');
    $path = '/v1/services/' . rawurlencode(sid(GRAPHS_SERVICE)) . '/usage/series';
    $deadline = time() + 20;
    do {
        check(time() < $deadline, 'no memory sampled within 20 s');
        usleep(300000);
        $to = gmdate('Y-m-d\TH:i:s\Z', time());
        $r = api(
            'GET',
            $path . '?metric=memory&points=10&from=' . rawurlencode(gmdate('Y-m-d\TH:i:s\Z', time() - 3600)) . '&to='
                . rawurlencode($to)
        );
        eq(200, $r->status, 'series ' . $r->body);
    } while (array_filter(array_column($r->json['series']['points'], 'avg'), 'is_numeric') === []);

    $c = Client::fromParams($p, 'en', getenv('PVEBILL_TEST_TRANSPORT') ?: 'auto');
    $now = time();
    foreach (Graph::RANGES as $range => $seconds) {
        $html = module()->graphsHtml($c, $p, 'ct-2g', $range, $now);
        check(!str_contains($html, 'pvebill-graph-error'), $range . ': ' . $html);
        preg_match_all('#<svg\b.*?</svg>#s', $html, $m);
        eq(4, count($m[0]), $range . ': memory, swap, CPU and network');
        $docs = array_map('svgDom', $m[0]);
        $q = '&points=' . Graph::POINTS . '&from=' . rawurlencode(gmdate('Y-m-d\TH:i:s\Z', $now - $seconds))
            . '&to=' . rawurlencode(gmdate('Y-m-d\TH:i:s\Z', $now));
        $known = static function (string $metric) use ($path, $q): int {
            $r = api('GET', $path . '?metric=' . $metric . $q);
            eq(200, $r->status, $metric . ' ' . $r->body);
            $avg = array_column($r->json['series']['points'], 'avg');
            return count(array_filter($avg, static fn ($v) => $v !== null));
        };
        $memory = $known('memory');
        check($memory >= 1, $range . ': the sampled memory is known');
        eq($memory, drawnPoints($docs[0]), $range . ': memory points drawn');
        eq($known('swap'), drawnPoints($docs[1]), $range . ': swap points drawn');
        eq($known('cpu'), drawnPoints($docs[2]), $range . ': CPU points drawn');
        eq($known('netin'), drawnPoints($docs[3], '#1f6feb'), $range . ': received points drawn');
        eq($known('netout'), drawnPoints($docs[3], '#d9480f'), $range . ': sent points drawn');
        eq(['Plan limit 2 GiB'], svgTexts($docs[0], 'limit-label'), $range . ': memory limit of ct-2g');
        eq(['Plan limit 512 MiB'], svgTexts($docs[1], 'limit-label'), $range . ': swap limit of ct-2g');
        eq(
            [0, 0],
            [count(svgClass($docs[2], 'limit')), count(svgClass($docs[3], 'limit'))],
            $range . ': no limit for CPU and network'
        );
        foreach ($docs as $i => $d) {
            check(count(svgTexts($d, 'x-tick')) >= 3, $range . ' graph ' . $i . ': time labels');
            check(count(svgTexts($d, 'y-tick')) >= 3, $range . ' graph ' . $i . ': value labels');
            assertSelfContained($d);
        }
        foreach (svgTexts($docs[2], 'y-tick') as $label) {
            check(str_ends_with($label, ' %'), $range . ': CPU tick ' . $label);
        }
        contains(
            svgTexts($docs[0], 'title')[0],
            'Memory · ' . Pvebill\Lang::named('english')->t('range_' . $range),
            'title'
        );
    }

    // The client area page carries the graphs of the period asked for, with links to the others.
    $v = module()->clientArea($p, 'week')['templateVariables']['pvebill'];
    eq(null, $v['error'], 'client area error');
    eq(4, substr_count($v['graphs'], '<svg '), 'four graphs on the page');
    contains($v['graphs'], '<strong>Last week</strong>', 'the period shown');
    contains(
        $v['graphs'],
        'href="clientarea.php?action=productdetails&amp;id=' . GRAPHS_SERVICE . '&amp;pvebill_range=month"',
        'link'
    );
    check(!preg_match('#(src|href)="(https?:)?//#i', $v['graphs']), 'no external reference on the page');
    eq('success', module()->terminateAccount($p), 'TerminateAccount');
});
