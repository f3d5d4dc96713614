<?php

declare(strict_types=1);

namespace Pvebill\Tests;

/** WHMCS's tblhosting rows in memory: (server, id) → columns. */
final class MemoryHosting implements \Pvebill\HostingStore
{
    /** @var array<string, array<string,int|string>> */
    public array $rows = [];

    public function add(int $serverId, int $id): void
    {
        $this->rows[$serverId . '/' . $id] = ['diskusage' => 0, 'disklimit' => 0, 'bwusage' => 0, 'bwlimit' => 0,
            'lastupdate' => ''];
    }

    public function updateUsage(int $serverId, int $hostingId, array $fields): bool
    {
        $k = $serverId . '/' . $hostingId;
        if (!isset($this->rows[$k])) {
            return false;
        }
        $this->rows[$k] = array_replace($this->rows[$k], $fields);
        return true;
    }
}
