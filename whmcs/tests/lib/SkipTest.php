<?php

declare(strict_types=1);

namespace Pvebill\Tests;

final class SkipTest extends \Exception
{
}
