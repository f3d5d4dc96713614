<?php

// Stand-in of WHMCS AbstractUnit (as WHMCS documents it), for the tests only: the module uses WHMCS's own.

declare(strict_types=1);

namespace WHMCS\UsageBilling\Metrics\Units;

use WHMCS\UsageBilling\Contracts\Metrics\UnitInterface;

abstract class AbstractUnit implements UnitInterface
{
    public function __construct(
        private $name,
        private $singlePerUnitName = null,
        private $pluralPerUnitName = null,
        private $prefix = null,
        private $suffix = null
    ) {
    }

    public function name()
    {
        return $this->name;
    }

    public function singlePerUnitName()
    {
        return $this->singlePerUnitName;
    }

    public function pluralPerUnitName()
    {
        return $this->pluralPerUnitName;
    }

    public function prefix()
    {
        return $this->prefix;
    }

    public function suffix()
    {
        return $this->suffix;
    }
}
