<?php

// A request pvebill refused or did not answer, or an operation that did not succeed: its message
// is what the admin reads (pvebill's translated detail), its code pvebill's stable one.

declare(strict_types=1);

namespace Pvebill\Fossbilling;

final class ApiError extends \RuntimeException
{
    public function __construct(string $message, public readonly string $apiCode = '')
    {
        parent::__construct($message);
    }
}
