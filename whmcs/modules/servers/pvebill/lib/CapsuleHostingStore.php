<?php

// UsageUpdate's writes into WHMCS's tblhosting.

declare(strict_types=1);

namespace Pvebill;

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
