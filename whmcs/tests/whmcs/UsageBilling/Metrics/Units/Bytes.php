<?php

// Stand-in of WHMCS Bytes (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics\Units;

class Bytes extends FloatingPoint
{
    public function __construct(
        $name = 'Bytes',
        $singlePerUnitName = 'Byte',
        $pluralPerUnitName = 'Bytes',
        $prefix = null,
        $suffix = 'B'
    ) {
        parent::__construct($name, $singlePerUnitName, $pluralPerUnitName, $prefix, $suffix);
    }
}
