<?php

declare(strict_types=1);

namespace Pvebill\Tests;

/** What the module handed WHMCS's logModuleCall, per action: request, raw answer, values to mask. */
final class ModuleLog
{
    /** @var list<array{action: string, request: mixed, response: mixed, replace: array}> */
    public static array $calls = [];
}
