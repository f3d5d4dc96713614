<?php

// Where UsageUpdate writes: WHMCS's hosting table.

declare(strict_types=1);

namespace Pvebill;

/** Writes usage figures into WHMCS's hosting table. */
interface HostingStore
{
    /**
     * @param array<string,int|string> $fields diskusage, disklimit, bwusage, bwlimit (MB), lastupdate
     * @return bool whether a row of that server with that id exists
     */
    public function updateUsage(int $serverId, int $hostingId, array $fields): bool;
}
