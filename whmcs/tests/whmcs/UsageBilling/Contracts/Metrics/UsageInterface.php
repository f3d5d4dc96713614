<?php

// Stand-in of WHMCS UsageInterface (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Contracts\Metrics;

interface UsageInterface
{
    public function collectedAt();

    public function startAt();

    public function endAt();

    /** @return float */
    public function value();
}
