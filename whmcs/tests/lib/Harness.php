<?php

declare(strict_types=1);

namespace Pvebill\Tests;

final class Harness
{
    /** @var list<array{string, callable}> */
    public static array $tests = [];

    public static function run(string $filter): bool
    {
        $passed = $failed = $skipped = 0;
        foreach (self::$tests as [$name, $fn]) {
            if ($filter !== '' && !str_contains($name, $filter)) {
                continue;
            }
            $t0 = microtime(true);
            try {
                $fn();
                $passed++;
                printf("ok    %s (%.2fs)\n", $name, microtime(true) - $t0);
            } catch (SkipTest $e) {
                $skipped++;
                printf("skip  %s: %s\n", $name, $e->getMessage());
            } catch (\Throwable $e) {
                $failed++;
                printf("FAIL  %s: %s\n", $name, $e->getMessage());
                if (!$e instanceof AssertionFailed) {
                    printf("      %s:%d\n", $e->getFile(), $e->getLine());
                }
            }
        }
        if ($skipped > 0) {
            printf("(%d skipped)\n", $skipped);
        }
        printf("%d passed, %d failed\n", $passed, $failed);
        return $failed === 0;
    }
}
