<?php

// Where the module keeps the open attempt of each action, so that a Module Queue retry sends
// the same Idempotency-Key.

declare(strict_types=1);

namespace Pvebill;

/**
 * The stable attempt key of an action on a service. open() returns the key of the attempt
 * still open for (service, action), or starts a new one; close() ends it once the action has
 * an answer that a retry must not replay (success, failure, refusal).
 */
interface AttemptStore
{
    public function open(string $serviceId, string $action): string;

    public function close(string $serviceId, string $action): void;
}
