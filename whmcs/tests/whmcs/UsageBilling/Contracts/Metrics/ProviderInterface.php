<?php

// Stand-in of WHMCS ProviderInterface (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Contracts\Metrics;

interface ProviderInterface
{
    /** @return MetricInterface[] every metric, keyed by system name */
    public function metrics();

    /** @return array every tenant's metrics, keyed by tenant id */
    public function usage();

    /** @return MetricInterface[] */
    public function tenantUsage($tenant);
}
