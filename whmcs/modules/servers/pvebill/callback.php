<?php

/**
 * pvebill completion callbacks into WHMCS. Point pvebill's clients[].callback_url at
 * https://<whmcs>/modules/servers/pvebill/callback.php and put the same callback_secret into
 * the WHMCS server's Password field (the server whose Username is that API client id). Each
 * verified event is written once to WHMCS's activity log; repeats (same event id) are
 * acknowledged and dropped. An event that could not be recorded is answered 503 and not
 * acknowledged, so pvebill delivers it again.
 */

declare(strict_types=1);

require_once __DIR__ . '/../../../init.php';
require_once __DIR__ . '/lib/autoload.php';

use Pvebill\CallbackReceiver;
use WHMCS\Database\Capsule;

$eventsTable = 'mod_pvebill_events';
$receiver = new CallbackReceiver(
    static function (string $clientId): ?string {
        $enc = Capsule::table('tblservers')->where('type', 'pvebill')->where('username', $clientId)
            ->value('password');
        if ($enc === null || $enc === '') {
            return null;
        }
        $res = localAPI('DecryptPassword', ['password2' => $enc]);
        return ($res['result'] ?? '') === 'success' ? (string) $res['password'] : null;
    },
    static function (string $eventId) use ($eventsTable): bool {
        $schema = Capsule::schema();
        if (!$schema->hasTable($eventsTable)) {
            $schema->create($eventsTable, static function ($t): void {
                $t->string('event_id', 36)->primary();
                $t->timestamp('received_at')->nullable();
            });
        }
        // A repeated id is ignored (0 rows); any other failure throws and is answered 503, so
        // pvebill retries instead of losing the event.
        $rows = Capsule::table($eventsTable)
            ->insertOrIgnore(['event_id' => $eventId, 'received_at' => gmdate('Y-m-d H:i:s')]);
        return $rows > 0;
    },
);

$headers = [];
foreach ($_SERVER as $k => $v) {
    if (str_starts_with($k, 'HTTP_')) {
        $headers[strtolower(str_replace('_', '-', substr($k, 5)))] = (string) $v;
    }
}
$res = $receiver->handle(
    $_SERVER['REQUEST_METHOD'] ?? '',
    $_SERVER['REQUEST_URI'] ?? '',
    $headers,
    (string) file_get_contents('php://input'),
    time()
);
if ($res['event'] !== null && !$res['duplicate']) {
    logActivity(CallbackReceiver::describe($res['event']));
}
http_response_code($res['status']);
if ($res['error'] !== null) {
    header('Content-Type: text/plain');
    echo $res['error'];
}
