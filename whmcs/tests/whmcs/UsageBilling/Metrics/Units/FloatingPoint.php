<?php

// Stand-in of WHMCS FloatingPoint (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics\Units;

class FloatingPoint extends AbstractUnit
{
}
