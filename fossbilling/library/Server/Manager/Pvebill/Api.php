<?php

// The FOSSBilling server manager's own small client for pvebill: every request signed (v1 =
// hex HMAC-SHA256 over timestamp "\n" METHOD "\n" request URI "\n" raw body, docs/api.md
// "Signing"), JSON in and out, pvebill's refusals translated by Accept-Language, and an
// operation followed until it has ended.

declare(strict_types=1);

namespace Pvebill\Fossbilling;

final class Api
{
    public const USER_AGENT = 'pvebill-fossbilling/1';

    /** How many times a request refused as signature_replayed is signed again (R47). */
    private const RESIGN_ATTEMPTS = 3;

    /**
     * @param string $baseUrl  scheme, host and port, e.g. https://pvebill.example.com:8443
     * @param int    $timeout  seconds one HTTP request may take (FOSSBilling's own patience)
     * @param int    $deadline seconds an operation is followed before the call gives up
     * @param int    $wait     seconds pvebill holds each answer for the operation to end (?wait=)
     */
    public function __construct(
        private readonly string $baseUrl,
        private readonly string $clientId,
        private readonly string $secret,
        private readonly string $language = 'en',
        private readonly int $timeout = 30,
        private readonly int $deadline = 600,
        private readonly int $wait = 20,
    ) {
        if ($clientId === '' || $secret === '') {
            throw new ApiError('pvebill: the API client id (username) and its secret (access hash) must be set');
        }
    }

    /** The v1 signature of a request. */
    public static function sign(string $secret, string $ts, string $method, string $uri, string $body): string
    {
        return 'v1=' . hash_hmac('sha256', $ts . "\n" . $method . "\n" . $uri . "\n" . $body, $secret);
    }

    /**
     * Sends one signed request and returns [status, decoded JSON (or null), whether pvebill
     * replayed the first answer to its Idempotency-Key].
     *
     * @param array<string,mixed>|null $body    null sends no body
     * @param array<string,string>     $headers extra headers (Idempotency-Key)
     * @return array{int, array<string,mixed>|null, bool}
     * @throws ApiError when no answer arrived in time
     */
    public function request(string $method, string $uri, ?array $body = null, array $headers = []): array
    {
        $raw = $body === null ? '' : json_encode(
            $body === [] ? new \stdClass() : $body,
            JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR
        );
        $now = time();
        for ($attempt = 0;; $attempt++) {
            $answer = $this->send($method, $uri, $raw, $headers, $now - $attempt);
            $replayed = $answer[0] === 401 && ($answer[1]['code'] ?? '') === 'signature_replayed';
            if (!$replayed || $attempt >= self::RESIGN_ATTEMPTS) {
                return $answer;
            }
        }
    }

    /**
     * Sends a mutation and follows its operation until it has ended: the operation when it
     * succeeded, an ApiError with pvebill's translated detail otherwise.
     *
     * @param array<string,mixed>|null $body
     * @return array<string,mixed> the finished operation
     * @throws ApiError
     */
    public function operate(string $method, string $path, ?array $body, string $idempotencyKey): array
    {
        // A key whose first attempt ended without success is not asked again under that key:
        // the replay would only repeat the failure. The next attempt's key names the failed
        // operation, so it is as stable across FOSSBilling's retries as the first one.
        for ($i = 0;; $i++) {
            [$op, $replayed] = $this->attempt($method, $path, $body, $idempotencyKey);
            if ($op['state'] === 'succeeded' || !$replayed || $idempotencyKey === '' || $i >= 5) {
                break;
            }
            $idempotencyKey = substr($idempotencyKey, 0, 180) . ':after:' . (string) $op['id'];
        }
        if ($op['state'] !== 'succeeded') {
            $err = is_array($op['error'] ?? null) ? $op['error'] : [];
            throw new ApiError(
                'pvebill: ' . ($err['detail'] ?? $op['state']) . ' (' . ($err['code'] ?? $op['state']) . ')',
                (string) ($err['code'] ?? $op['state'])
            );
        }
        return $op;
    }

    /**
     * Sends a mutation and follows its operation until it has ended.
     *
     * @param array<string,mixed>|null $body
     * @return array{array<string,mixed>, bool} the ended operation, and whether the answer was
     *                                          the replay of an earlier attempt's
     * @throws ApiError
     */
    private function attempt(string $method, string $path, ?array $body, string $key): array
    {
        $wait = max(1, min(60, $this->wait));
        $headers = $key === '' ? [] : ['Idempotency-Key' => $key];
        [$status, $json, $replayed] = $this->request($method, $path . '?wait=' . $wait, $body, $headers);
        $op = $this->operationOf($status, $json);
        $until = time() + $this->deadline;
        while (!in_array($op['state'] ?? '', ['succeeded', 'failed', 'needs_reconciliation'], true)) {
            if (time() >= $until) {
                throw new ApiError('pvebill: operation ' . ($op['id'] ?? '?') . ' has not ended yet; try again later');
            }
            $uri = '/v1/operations/' . rawurlencode((string) $op['id']) . '?wait=' . $wait;
            [$status, $json] = $this->request('GET', $uri);
            $op = $this->operationOf($status, $json);
        }
        return [$op, $replayed];
    }

    /**
     * The operation of an answer, or the refusal as an ApiError.
     *
     * @param array<string,mixed>|null $json
     * @return array<string,mixed>
     */
    private function operationOf(int $status, ?array $json): array
    {
        if ($status >= 200 && $status < 300 && is_array($json['operation'] ?? null)) {
            return $json['operation'];
        }
        throw self::refusal($status, $json);
    }

    /**
     * A refusal as an ApiError: pvebill's translated detail (and its reason, for a capability
     * refused), its code and its permanence.
     *
     * @param array<string,mixed>|null $json
     */
    public static function refusal(int $status, ?array $json): ApiError
    {
        $code = (string) ($json['code'] ?? ('http_' . $status));
        $text = (string) ($json['detail'] ?? ('HTTP ' . $status));
        if (isset($json['reason']) && is_string($json['reason']) && $json['reason'] !== '') {
            $text .= ' ' . $json['reason'];
        }
        $perm = isset($json['permanence']) ? ', ' . $json['permanence'] : '';
        return new ApiError('pvebill: ' . $text . ' (' . $code . $perm . ')', $code);
    }

    /**
     * @param array<string,string> $headers
     * @return array{int, array<string,mixed>|null, bool}
     */
    private function send(string $method, string $uri, string $raw, array $headers, int $ts): array
    {
        $all = [
            'Accept' => 'application/json, application/problem+json',
            'Accept-Language' => $this->language,
            'User-Agent' => self::USER_AGENT,
            'X-Pvebill-Key' => $this->clientId,
            'X-Pvebill-Timestamp' => (string) $ts,
            'X-Pvebill-Signature' => self::sign($this->secret, (string) $ts, $method, $uri, $raw),
            'Connection' => 'close',
            'Content-Length' => (string) strlen($raw),
        ] + ($raw === '' ? [] : ['Content-Type' => 'application/json']) + $headers;
        $lines = [];
        foreach ($all as $k => $v) {
            $lines[] = $k . ': ' . $v;
        }
        $ctx = stream_context_create([
            'http' => ['method' => $method, 'header' => implode("\r\n", $lines), 'content' => $raw,
                'timeout' => $this->timeout, 'ignore_errors' => true, 'follow_location' => 0,
                'protocol_version' => 1.1],
            'ssl' => ['verify_peer' => true, 'verify_peer_name' => true],
        ]);
        $err = null;
        set_error_handler(static function (int $no, string $msg) use (&$err): bool {
            $err = $msg;
            return true;
        });
        try {
            $body = file_get_contents($this->baseUrl . $uri, false, $ctx);
            $head = function_exists('http_get_last_response_headers')
                ? (http_get_last_response_headers() ?? [])
                : ($http_response_header ?? []);
        } finally {
            restore_error_handler();
        }
        if ($body === false || $head === []) {
            throw new ApiError('pvebill: no answer from ' . $this->baseUrl . ': ' . ($err ?? 'timed out'), 'no_answer');
        }
        $status = 0;
        $replayed = false;
        foreach ($head as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m)) {
                $status = (int) $m[1];
                $replayed = false;
            }
            $replayed = $replayed || preg_match('#^Idempotent-Replayed:\s*true#i', $line) === 1;
        }
        $json = $body === '' ? null : json_decode($body, true);
        return [$status, is_array($json) ? $json : null, $replayed];
    }
}
