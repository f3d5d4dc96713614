<?php
// Where the module keeps what must outlive one PHP request: the open attempt of each action
// (so a Module Queue retry sends the same Idempotency-Key) and, for UsageUpdate, WHMCS's
// hosting table.

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

/** Writes usage figures into WHMCS's hosting table. */
interface HostingStore
{
    /**
     * @param array<string,int|string> $fields diskusage, disklimit, bwusage, bwlimit (MB), lastupdate
     * @return bool whether a row of that server with that id exists
     */
    public function updateUsage(int $serverId, int $hostingId, array $fields): bool;
}

function newAttemptKey(): string
{
    return bin2hex(random_bytes(8));
}

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
        $key = newAttemptKey();
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

/** Attempts in a JSON file, locked while read and written (outside WHMCS: CLI tools, tests). */
final class FileAttemptStore implements AttemptStore
{
    public function __construct(private readonly string $path)
    {
    }

    public function open(string $serviceId, string $action): string
    {
        return $this->locked(static function (array &$all) use ($serviceId, $action): string {
            $k = $serviceId . "\n" . $action;
            if (!isset($all[$k])) {
                $all[$k] = newAttemptKey();
            }
            return $all[$k];
        });
    }

    public function close(string $serviceId, string $action): void
    {
        $this->locked(static function (array &$all) use ($serviceId, $action): string {
            unset($all[$serviceId . "\n" . $action]);
            return '';
        });
    }

    private function locked(callable $f): string
    {
        $fh = fopen($this->path, 'c+');
        if ($fh === false) {
            throw new \RuntimeException('cannot open ' . $this->path);
        }
        try {
            flock($fh, LOCK_EX);
            $raw = stream_get_contents($fh);
            $all = $raw === '' || $raw === false ? [] : (json_decode($raw, true) ?: []);
            $out = $f($all);
            ftruncate($fh, 0);
            rewind($fh);
            fwrite($fh, json_encode($all, JSON_THROW_ON_ERROR));
            fflush($fh);
            return $out;
        } finally {
            flock($fh, LOCK_UN);
            fclose($fh);
        }
    }
}

/** WHMCS's tblhosting through Capsule. */
final class CapsuleHostingStore implements HostingStore
{
    public function updateUsage(int $serverId, int $hostingId, array $fields): bool
    {
        $capsule = '\WHMCS\Database\Capsule';
        $q = $capsule::table('tblhosting')->where('id', $hostingId)->where('server', $serverId);
        if (!$q->exists()) {
            return false;
        }
        $capsule::table('tblhosting')->where('id', $hostingId)->where('server', $serverId)->update($fields);
        return true;
    }
}
