<?php

// Stand-in of WHMCS MetricInterface (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Contracts\Metrics;

interface MetricInterface
{
    public const TYPE_SNAPSHOT = 'snapshot';
    public const TYPE_PERIOD_DAY = 'day';
    public const TYPE_PERIOD_MONTH = 'month';

    /** @return UsageInterface|null */
    public function usage();

    /** @return static a copy with $usage */
    public function withUsage(UsageInterface $usage = null);

    /** @return UnitInterface */
    public function units();

    /** @return string */
    public function systemName();

    /** @return string */
    public function displayName();

    /** @return string one of the TYPE_* constants */
    public function type();
}
