<?php

// Stand-in of WHMCS UnitInterface (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Contracts\Metrics;

interface UnitInterface
{
    /** @return string */
    public function name();

    /** @return string|null */
    public function suffix();
}
