<?php

// Usage graphs for the client area as inline SVG: no JavaScript, no stylesheet, no font and no
// request of any kind; a viewBox and a 100 % width so that a graph fits a phone's screen. Every
// text is escaped; every number is written by the module itself.

declare(strict_types=1);

namespace Pvebill;

final class Graph
{
    /** The periods a customer can pick (seconds back from now). */
    public const RANGES = ['day' => 86400, 'week' => 7 * 86400, 'month' => 30 * 86400];

    /** Points asked of the series endpoint: a day in 10-minute steps, a week in hours. */
    public const POINTS = 168;

    /** Line colours, one a series of a graph. */
    private const COLOURS = ['#1f6feb', '#d9480f'];

    private const WIDTH = 480;
    private const HEIGHT = 240;
    private const LEFT = 78;
    private const RIGHT = 24;
    private const TOP = 30;
    private const BOTTOM = 34;
    private const TICKS = 4;

    /** The graph's own words in English. */
    private const WORDS = ['limit' => 'Plan limit {limit}', 'no_data' => 'No data for this period'];

    /**
     * One graph as an <svg> element.
     *
     * @param string $unit  the series' unit: "bytes", "bytes_per_second" or "ratio"
     * @param list<array{label: string, points: list<array{t: int, v: ?float}>}> $lines
     * @param ?float $limit the plan's limit in the unit, drawn as a dashed line (null: none)
     * @param int    $from  the period's start (unix seconds)
     * @param int    $to    its end
     * @param array{limit?: string, no_data?: string} $words the graph's own words in the page's
     *     language ({limit} stands for the limit's value); English by default
     */
    public static function svg(
        string $title,
        string $unit,
        array $lines,
        ?float $limit,
        int $from,
        int $to,
        array $words = []
    ): string {
        $to = max($to, $from + 1);
        $top = self::top($lines, $limit, $unit);
        $w = self::WIDTH - self::LEFT - self::RIGHT;
        $h = self::HEIGHT - self::TOP - self::BOTTOM;
        $x = static fn (int $t): float => self::LEFT + ($t - $from) / ($to - $from) * $w;
        $y = static fn (float $v): float => self::TOP + $h - min($v, $top['max']) / $top['max'] * $h;
        $id = 'pvebill-graph-' . substr(hash('sha256', $title . $from . $to), 0, 10);
        $out = sprintf(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="100%%" '
                . 'preserveAspectRatio="xMidYMid meet" role="img" aria-labelledby="%s" '
                . 'font-family="sans-serif" font-size="12" style="max-width:100%%;height:auto">',
            self::WIDTH,
            self::HEIGHT,
            $id
        );
        $out .= '<title id="' . $id . '">' . self::e($title) . '</title>';
        $out .= '<text class="title" x="' . self::LEFT . '" y="16" font-weight="bold">' . self::e($title) . '</text>';
        $out .= self::yAxis($top, $unit, $y);
        $out .= self::xAxis($from, $to, $x);
        if ($limit !== null) {
            $ly = self::n($y($limit));
            $out .= '<line class="limit" x1="' . self::LEFT . '" y1="' . $ly . '" x2="' . (self::WIDTH - self::RIGHT)
                . '" y2="' . $ly . '" stroke="#c92a2a" stroke-width="1.5" stroke-dasharray="6 4"/>';
            $out .= '<text class="limit-label" x="' . (self::WIDTH - self::RIGHT) . '" y="' . self::n($y($limit) - 4)
                . '" text-anchor="end" fill="#c92a2a">'
                    . self::e(strtr($words['limit'] ?? self::WORDS['limit'], ['{limit}' => self::label($limit, $unit)]))
                . '</text>';
        }
        $known = 0;
        foreach (array_values($lines) as $i => $line) {
            $colour = self::COLOURS[$i % count(self::COLOURS)];
            $known += self::count($line['points']);
            $out .= self::line($line['points'], $colour, $x, $y);
            if (count($lines) > 1) {
                $lx = self::LEFT + 8 + $i * 110;
                $out .= '<rect class="legend-key" x="' . $lx . '" y="' . (self::TOP + 4)
                    . '" width="10" height="10" fill="' . $colour . '"/><text class="legend" x="' . ($lx + 14)
                    . '" y="' . (self::TOP + 13) . '">'
                    . self::e($line['label']) . '</text>';
            }
        }
        if ($known === 0) {
            $out .= '<text class="empty" x="' . (self::LEFT + $w / 2) . '" y="' . (self::TOP + $h / 2)
                . '" text-anchor="middle" fill="#868e96">'
                . self::e($words['no_data'] ?? self::WORDS['no_data']) . '</text>';
        }
        return $out . '</svg>';
    }

    /**
     * The points of a series answer (docs/api.md, Usage) as the graph takes them: time and
     * average, null where pvebill does not know the value.
     *
     * @return list<array{t: int, v: ?float}>
     */
    public static function points(array $series): array
    {
        $out = [];
        foreach ($series['points'] ?? [] as $p) {
            $t = strtotime((string) ($p['t'] ?? ''));
            if ($t === false) {
                continue;
            }
            $v = $p['avg'] ?? null;
            $out[] = ['t' => $t, 'v' => is_int($v) || is_float($v) ? (float) $v : null];
        }
        return $out;
    }

    /** A value in its unit for people: bytes in binary units, a ratio in per cent. */
    public static function label(float $v, string $unit): string
    {
        return match ($unit) {
            'ratio' => self::trim($v * 100) . ' %',
            'bytes_per_second' => self::bytesText($v) . '/s',
            default => self::bytesText($v),
        };
    }

    /**
     * The y axis' scale: a round top at or above every value and the limit, in steps of 1, 2, 2.5
     * or 5 times a power of ten of the display unit (KiB, MiB, GiB … or per cent).
     *
     * @param list<array{label: string, points: list<array{t: int, v: ?float}>}> $lines
     * @return array{max: float, step: float}
     */
    private static function top(array $lines, ?float $limit, string $unit): array
    {
        $max = $limit ?? 0.0;
        foreach ($lines as $line) {
            foreach ($line['points'] as $p) {
                if ($p['v'] !== null) {
                    $max = max($max, $p['v']);
                }
            }
        }
        $base = $unit === 'ratio' ? 0.01 : 1.0;
        while ($unit !== 'ratio' && $max >= 1024 * $base && $base < 1024 ** 5) {
            $base *= 1024;
        }
        $scaled = $max / $base;
        if ($scaled <= 0) {
            return ['max' => self::TICKS * $base, 'step' => $base];
        }
        $raw = $scaled / self::TICKS;
        $pow = 10 ** floor(log10($raw));
        $step = $pow * 10;
        foreach ([1, 2, 2.5, 5, 10] as $m) {
            if ($m * $pow >= $raw) {
                $step = $m * $pow;
                break;
            }
        }
        return ['max' => ceil($scaled / $step - 1e-9) * $step * $base, 'step' => $step * $base];
    }

    private static function yAxis(array $top, string $unit, callable $y): string
    {
        $out = '';
        $steps = (int) round($top['max'] / $top['step']);
        for ($i = 0; $i <= $steps; $i++) {
            $v = $i * $top['step'];
            $py = self::n($y($v));
            $out .= '<line class="grid" x1="' . self::LEFT . '" y1="' . $py . '" x2="' . (self::WIDTH - self::RIGHT)
                . '" y2="' . $py . '" stroke="#dee2e6" stroke-width="1"/>';
            $out .= '<text class="y-tick" x="' . (self::LEFT - 6) . '" y="' . self::n($y($v) + 4)
                . '" text-anchor="end" fill="#495057">' . self::e(self::label($v, $unit)) . '</text>';
        }
        return $out;
    }

    /**
     * Time ticks on UTC boundaries: every 4 hours for a day, every day for a week, every 5 days
     * beyond; dates as month-day numbers, which read the same in every language.
     */
    private static function xAxis(int $from, int $to, callable $x): string
    {
        $span = $to - $from;
        [$every, $format] = match (true) {
            $span <= 2 * 86400 => [4 * 3600, 'H:i'],
            $span <= 8 * 86400 => [86400, 'm-d'],
            default => [5 * 86400, 'm-d'],
        };
        $base = self::HEIGHT - self::BOTTOM;
        $out = '<line class="axis" x1="' . self::LEFT . '" y1="' . $base . '" x2="' . (self::WIDTH - self::RIGHT)
            . '" y2="' . $base . '" stroke="#495057" stroke-width="1"/>';
        for ($t = intdiv($from + $every - 1, $every) * $every; $t <= $to; $t += $every) {
            $px = self::n($x($t));
            $out .= '<line class="x-mark" x1="' . $px . '" y1="' . $base . '" x2="' . $px . '" y2="' . ($base + 4)
                . '" stroke="#495057" stroke-width="1"/>';
            $out .= '<text class="x-tick" x="' . $px . '" y="' . ($base + 17) . '" text-anchor="middle" fill="#495057">'
                . self::e(gmdate($format, $t)) . '</text>';
        }
        return $out . '<text class="x-note" x="' . (self::WIDTH - self::RIGHT) . '" y="' . (self::HEIGHT - 2)
            . '" text-anchor="end" font-size="10" fill="#868e96">UTC</text>';
    }

    /**
     * A series as polylines, broken where a value is unknown (a gap, never a zero); a known point
     * between two gaps is a dot.
     *
     * @param list<array{t: int, v: ?float}> $points
     */
    private static function line(array $points, string $colour, callable $x, callable $y): string
    {
        $out = '';
        $run = [];
        $points[] = ['t' => 0, 'v' => null];
        foreach ($points as $p) {
            if ($p['v'] !== null) {
                $run[] = self::n($x($p['t'])) . ',' . self::n($y($p['v']));
                continue;
            }
            if (count($run) === 1) {
                [$cx, $cy] = explode(',', $run[0]);
                $out .= '<circle class="point" cx="' . $cx . '" cy="' . $cy . '" r="2" fill="' . $colour . '"/>';
            } elseif ($run !== []) {
                $out .= '<polyline class="series" points="' . implode(' ', $run) . '" fill="none" stroke="'
                    . $colour . '" stroke-width="1.5" stroke-linejoin="round"/>';
            }
            $run = [];
        }
        return $out;
    }

    /** @param list<array{t: int, v: ?float}> $points */
    private static function count(array $points): int
    {
        return count(array_filter($points, static fn (array $p): bool => $p['v'] !== null));
    }

    private static function bytesText(float $v): string
    {
        $units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
        $i = 0;
        while (abs($v) >= 1024 && $i < count($units) - 1) {
            $v /= 1024;
            $i++;
        }
        return self::trim($v) . ' ' . $units[$i];
    }

    /** A number with at most two decimals and no trailing zeros. */
    private static function trim(float $v): string
    {
        $s = rtrim(rtrim(sprintf('%.2f', $v), '0'), '.');
        return $s === '-0' ? '0' : $s;
    }

    private static function n(float $v): string
    {
        return sprintf('%.1f', $v);
    }

    private static function e(string $s): string
    {
        return htmlspecialchars($s, ENT_QUOTES | ENT_XML1 | ENT_SUBSTITUTE, 'UTF-8');
    }
}
