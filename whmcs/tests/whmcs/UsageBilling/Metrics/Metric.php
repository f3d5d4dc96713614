<?php

// Stand-in of WHMCS Metric (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics;

use WHMCS\UsageBilling\Contracts\Metrics\MetricInterface;
use WHMCS\UsageBilling\Contracts\Metrics\UnitInterface;
use WHMCS\UsageBilling\Contracts\Metrics\UsageInterface;

class Metric implements MetricInterface
{
    public function __construct(
        private $systemName,
        private $displayName = null,
        private $type = null,
        private ?UnitInterface $units = null,
        private ?UsageInterface $usage = null
    ) {
    }

    public function usage()
    {
        return $this->usage;
    }

    public function withUsage(UsageInterface $usage = null)
    {
        $m = clone $this;
        $m->usage = $usage;
        return $m;
    }

    public function units()
    {
        return $this->units;
    }

    public function systemName()
    {
        return $this->systemName;
    }

    public function displayName()
    {
        return $this->displayName ?? $this->systemName;
    }

    public function type()
    {
        return $this->type ?? self::TYPE_SNAPSHOT;
    }
}
