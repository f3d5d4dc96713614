<?php

declare(strict_types=1);

namespace Pvebill\Tests;

/** What the module handed WHMCS's logModuleCall, per action (the raw answers). */
final class ModuleLog
{
    /** @var list<array{action: string, response: mixed}> */
    public static array $calls = [];
}
