<?php

// Attempts in WHMCS's database.

declare(strict_types=1);

namespace Pvebill;

/** Attempts in WHMCS's database (table mod_pvebill_attempts, created on first use). */
final class CapsuleAttemptStore implements AttemptStore
{
    public const TABLE = 'mod_pvebill_attempts';

    private static bool $ready = false;

    public static function available(): bool
    {
        return class_exists('\WHMCS\Database\Capsule');
    }

    private function table()
    {
        $capsule = '\WHMCS\Database\Capsule';
        if (!self::$ready) {
            $schema = $capsule::schema();
            if (!$schema->hasTable(self::TABLE)) {
                $schema->create(self::TABLE, static function ($t): void {
                    $t->string('service_id', 64);
                    $t->string('action', 32);
                    $t->string('attempt', 32);
                    $t->timestamp('created_at')->nullable();
                    $t->primary(['service_id', 'action']);
                });
            }
            self::$ready = true;
        }
        return $capsule::table(self::TABLE);
    }

    public function open(string $serviceId, string $action): string
    {
        $row = $this->table()->where('service_id', $serviceId)->where('action', $action)->first();
        if ($row !== null) {
            return (string) $row->attempt;
        }
        $key = AttemptKey::fresh();
        try {
            $this->table()->insert(['service_id' => $serviceId, 'action' => $action, 'attempt' => $key,
                'created_at' => gmdate('Y-m-d H:i:s')]);
        } catch (\Throwable $e) {
            // Another request opened it at the same moment: use theirs.
            $row = $this->table()->where('service_id', $serviceId)->where('action', $action)->first();
            if ($row === null) {
                throw $e;
            }
            return (string) $row->attempt;
        }
        return $key;
    }

    public function close(string $serviceId, string $action): void
    {
        $this->table()->where('service_id', $serviceId)->where('action', $action)->delete();
    }
}
