<?php

// Stand-in of WHMCS Usage (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics;

use WHMCS\UsageBilling\Contracts\Metrics\UsageInterface;

class Usage implements UsageInterface
{
    public function __construct(
        private $value,
        private $collectedAt = null,
        private $startAt = null,
        private $endAt = null
    ) {
    }

    public function collectedAt()
    {
        return $this->collectedAt;
    }

    public function startAt()
    {
        return $this->startAt;
    }

    public function endAt()
    {
        return $this->endAt;
    }

    public function value()
    {
        return (float) $this->value;
    }
}
