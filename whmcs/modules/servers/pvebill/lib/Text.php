<?php

// Words the module shows itself (pvebill's own refusals arrive translated), the mapping from
// WHMCS language names to pvebill's nine languages, and display formatting.

declare(strict_types=1);

namespace Pvebill;

final class Text
{
    public const NOT_AVAILABLE = 'Not available';

    /** WHMCS language names (lang/*.php) → pvebill's languages; anything else is English. */
    private const LANGUAGES = [
        'english' => 'en', 'german' => 'de', 'spanish' => 'es', 'french' => 'fr', 'italian' => 'it',
        'dutch' => 'nl', 'polish' => 'pl', 'portuguese-pt' => 'pt', 'portuguese-br' => 'pt',
        'turkish' => 'tr',
    ];

    /** What a reinstall does to each mount's data (the intent's `data`). */
    public const DATA_LABELS = [
        'erased' => 'Erased: everything on this volume is deleted',
        'untouched' => 'Untouched: the data stays where it is',
        'excluded' => 'Excluded: it belongs to another guest and is left alone',
    ];

    /** What happens to the mount afterwards (the intent's `mount_after`). */
    public const MOUNT_LABELS = [
        'recreated' => 'Recreated empty',
        'removed' => 'No longer mounted',
        'kept' => 'Mounted again',
        'remounted' => 'Mounted again',
    ];

    /** The Accept-Language for a WHMCS client (clientsdetails.language), English by default. */
    public static function language(array $params): string
    {
        $name = strtolower(trim((string) ($params['clientsdetails']['language'] ?? '')));
        return self::LANGUAGES[$name] ?? 'en';
    }

    /** Bytes for people: binary units, one decimal below 10; null is "Not available". */
    public static function bytes(int|float|null $n): string
    {
        if ($n === null) {
            return self::NOT_AVAILABLE;
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
    public static function usedOf(?int $used, ?int $max): string
    {
        if ($used === null) {
            return self::NOT_AVAILABLE;
        }
        return $max === null ? self::bytes($used) : self::bytes($used) . ' of ' . self::bytes($max);
    }

    public static function percent(?float $fraction): string
    {
        return $fraction === null ? self::NOT_AVAILABLE : sprintf('%.1f %%', $fraction * 100);
    }

    public static function duration(?int $seconds): string
    {
        if ($seconds === null) {
            return self::NOT_AVAILABLE;
        }
        $d = intdiv($seconds, 86400);
        $h = intdiv($seconds % 86400, 3600);
        $m = intdiv($seconds % 3600, 60);
        if ($d > 0) {
            return sprintf('%dd %dh %dm', $d, $h, $m);
        }
        return $h > 0 ? sprintf('%dh %dm', $h, $m) : sprintf('%dm %ds', $m, $seconds % 60);
    }

    public static function yesNo(?bool $v): string
    {
        return $v === null ? self::NOT_AVAILABLE : ($v ? 'Yes' : 'No');
    }

    /** Bytes to WHMCS's whole megabytes (MiB), rounded. */
    public static function megabytes(int|float $bytes): int
    {
        return (int) round($bytes / 1048576);
    }
}
