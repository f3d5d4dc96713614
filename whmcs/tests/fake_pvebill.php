<?php

// Router for PHP's built-in web server standing in for pvebill in tests that need answers a
// real server gives only by accident (a proxy's 502, a key still in flight). It logs every
// request to $FAKE_DIR/requests.jsonl and answers with the next entry of
// $FAKE_DIR/responses.json: {"status", "body" (JSON value or string), "type"?, "delay"?
// (seconds to hold the answer, as pvebill holds a ?wait= long-poll)}.

declare(strict_types=1);

$dir = getenv('FAKE_DIR');
$body = file_get_contents('php://input');
$headers = [];
foreach ($_SERVER as $k => $v) {
    if (str_starts_with($k, 'HTTP_')) {
        $headers[strtolower(str_replace('_', '-', substr($k, 5)))] = $v;
    }
}
file_put_contents($dir . '/requests.jsonl', json_encode(['method' => $_SERVER['REQUEST_METHOD'],
    'uri' => $_SERVER['REQUEST_URI'], 'headers' => $headers, 'body' => $body]) . "\n", FILE_APPEND | LOCK_EX);

$queue = json_decode((string) file_get_contents($dir . '/responses.json'), true) ?: [];
$next = array_shift($queue) ?? ['status' => 500, 'body' => 'no scripted answer left'];
file_put_contents($dir . '/responses.json', json_encode($queue));

if (($next['delay'] ?? 0) > 0) {
    sleep((int) $next['delay']);
}
http_response_code($next['status']);
if (is_string($next['body'])) {
    header('Content-Type: ' . ($next['type'] ?? 'text/html'));
    echo $next['body'];
} else {
    header('Content-Type: ' . ($next['type'] ?? 'application/json'));
    echo json_encode($next['body']);
}
