<?php

// The key of a new attempt.

declare(strict_types=1);

namespace Pvebill;

/** A fresh attempt key: 16 hex digits from the system's random source. */
final class AttemptKey
{
    public static function fresh(): string
    {
        return bin2hex(random_bytes(8));
    }
}
