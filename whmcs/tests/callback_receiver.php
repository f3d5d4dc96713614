<?php

// Router for PHP's built-in web server: a billing system's callback endpoint built on the
// module's CallbackReceiver. scripts/whmcs-test.sh points pvebill's callback_url at it; every
// request's outcome is appended to $RECEIVER_DIR/events.jsonl for the tests to read.

declare(strict_types=1);

require __DIR__ . '/../modules/servers/pvebill/lib/autoload.php';

$dir = (string) getenv('RECEIVER_DIR');
$secret = (string) getenv('RECEIVER_SECRET');
$receiver = new Pvebill\CallbackReceiver(
    static fn (string $client): ?string => $secret,
    static function (string $id) use ($dir): bool {
        $fh = @fopen($dir . '/seen.json', 'c+');
        if ($fh === false || !flock($fh, LOCK_EX)) {
            throw new RuntimeException('cannot open the store of seen events');
        }
        $seen = json_decode((string) stream_get_contents($fh), true) ?: [];
        $first = !isset($seen[$id]);
        $seen[$id] = true;
        ftruncate($fh, 0);
        rewind($fh);
        fwrite($fh, json_encode($seen));
        flock($fh, LOCK_UN);
        fclose($fh);
        return $first;
    },
);
$headers = [];
foreach ($_SERVER as $k => $v) {
    if (str_starts_with($k, 'HTTP_')) {
        $headers[strtolower(str_replace('_', '-', substr($k, 5)))] = (string) $v;
    }
}
$res = $receiver->handle(
    $_SERVER['REQUEST_METHOD'],
    $_SERVER['REQUEST_URI'],
    $headers,
    (string) file_get_contents('php://input'),
    time()
);
file_put_contents(
    $dir . '/events.jsonl',
    json_encode($res + ['key' => $headers['x-pvebill-key'] ?? '']) . "\n",
    FILE_APPEND | LOCK_EX
);
http_response_code($res['status']);
