<?php

// Display formatting of the client area's figures and times; the words come from Lang.

declare(strict_types=1);

namespace Pvebill;

final class Text
{
    /** The English of "not available"; the page shows the customer's word (Lang key not_available). */
    public const NOT_AVAILABLE = 'Not available';

    /** What a reinstall or restore does to each mount's data (the intent's `data`): its text's key. */
    public const DATA_KEYS = ['erased' => 'data_erased', 'untouched' => 'data_untouched',
        'excluded' => 'data_excluded'];

    /** What happens to the mount afterwards (the intent's `mount_after`): its text's key. */
    public const MOUNT_KEYS = [
        'recreated' => 'mount_recreated',
        'removed' => 'mount_removed',
        'kept' => 'mount_kept',
        'remounted' => 'mount_kept',
    ];

    /** Bytes for people: binary units, one decimal below 10; null is "Not available". */
    public static function bytes(int|float|null $n, ?Lang $l = null): string
    {
        if ($n === null) {
            return self::na($l);
        }
        $units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
        $i = 0;
        $v = (float) $n;
        while ($v >= 1024 && $i < count($units) - 1) {
            $v /= 1024;
            $i++;
        }
        if ($i === 0) {
            return sprintf('%d B', (int) $v);
        }
        return $v < 10 ? sprintf('%.1f %s', $v, $units[$i]) : sprintf('%d %s', (int) round($v), $units[$i]);
    }

    /** "used of max" where either may be unknown. */
    public static function usedOf(?int $used, ?int $max, ?Lang $l = null): string
    {
        if ($used === null) {
            return self::na($l);
        }
        if ($max === null) {
            return self::bytes($used);
        }
        return self::lang($l)->t('used_of', ['used' => self::bytes($used), 'max' => self::bytes($max)]);
    }

    public static function percent(?float $fraction, ?Lang $l = null): string
    {
        return $fraction === null ? self::na($l) : sprintf('%.1f %%', $fraction * 100);
    }

    public static function duration(?int $seconds, ?Lang $l = null): string
    {
        if ($seconds === null) {
            return self::na($l);
        }
        $d = intdiv($seconds, 86400);
        $h = intdiv($seconds % 86400, 3600);
        $m = intdiv($seconds % 3600, 60);
        if ($d > 0) {
            return sprintf('%dd %dh %dm', $d, $h, $m);
        }
        return $h > 0 ? sprintf('%dh %dm', $h, $m) : sprintf('%dm %ds', $m, $seconds % 60);
    }

    public static function yesNo(?bool $v, ?Lang $l = null): string
    {
        return $v === null ? self::na($l) : self::lang($l)->t($v ? 'yes' : 'no');
    }

    /**
     * A time pvebill gave (RFC 3339) as the client area shows every time, backups' and
     * snapshots' alike: "2026-01-31 02:00 UTC"; none or unreadable is "Not available".
     */
    public static function time(?string $rfc3339, ?Lang $l = null): string
    {
        $t = $rfc3339 === null || $rfc3339 === '' ? false : strtotime($rfc3339);
        return $t === false ? self::na($l) : gmdate('Y-m-d H:i', $t) . ' UTC';
    }

    /** Bytes to WHMCS's whole megabytes (MiB), rounded. */
    public static function megabytes(int|float $bytes): int
    {
        return (int) round($bytes / 1048576);
    }

    private static function lang(?Lang $l): Lang
    {
        return $l ?? Lang::named(Lang::FALLBACK);
    }

    private static function na(?Lang $l): string
    {
        return self::lang($l)->t('not_available');
    }
}
