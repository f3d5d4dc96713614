<?php

declare(strict_types=1);

namespace Pvebill\Tests;

final class AssertionFailed extends \Exception
{
}
