<?php

// Stand-in of WHMCS GigaBytes (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics\Units;

class GigaBytes extends Bytes
{
    public function __construct(
        $name = 'Gigabytes',
        $singlePerUnitName = null,
        $pluralPerUnitName = null,
        $prefix = null,
        $suffix = 'GB'
    ) {
        parent::__construct($name, $singlePerUnitName, $pluralPerUnitName, $prefix, $suffix);
    }
}
