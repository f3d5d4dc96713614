<?php

// Attempts in a file, for use outside WHMCS.

declare(strict_types=1);

namespace Pvebill;

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
                $all[$k] = AttemptKey::fresh();
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
