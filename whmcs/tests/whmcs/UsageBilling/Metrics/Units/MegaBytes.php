<?php

// Stand-in of WHMCS MegaBytes (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics\Units;

class MegaBytes extends Bytes
{
    public function __construct(
        $name = 'Megabytes',
        $singlePerUnitName = null,
        $pluralPerUnitName = null,
        $prefix = null,
        $suffix = 'MB'
    ) {
        parent::__construct($name, $singlePerUnitName, $pluralPerUnitName, $prefix, $suffix);
    }
}
