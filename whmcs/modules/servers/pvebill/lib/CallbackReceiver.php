<?php

// The receiving end of pvebill's completion callbacks: checks the signature (the API's own
// scheme, keyed with the callback secret) and the timestamp, and drops a repeated event id
// (delivery is at-least-once). An event is acknowledged only once it is stored: when the store
// fails the answer is 503, so pvebill delivers it again.

declare(strict_types=1);

namespace Pvebill;

final class CallbackReceiver
{
    public const WINDOW = 300;

    /**
     * @param \Closure(string): ?string $secretFor the callback secret of an API client id, null if unknown
     * @param \Closure(string): bool    $firstSeen records an event id; false when it was seen before;
     *                                            throws when the id could not be recorded
     */
    public function __construct(
        private readonly \Closure $secretFor,
        private readonly \Closure $firstSeen,
    ) {
    }

    /**
     * @param array<string,string> $headers lower-cased names
     * @return array{status: int, event: ?array, duplicate: bool, error: ?string}
     */
    public function handle(string $method, string $requestUri, array $headers, string $body, int $now): array
    {
        $fail = static fn (int $status, string $why) => ['status' => $status, 'event' => null, 'duplicate' => false,
            'error' => $why];
        if ($method !== 'POST') {
            return $fail(405, 'POST only');
        }
        $key = (string) ($headers['x-pvebill-key'] ?? '');
        $ts = (string) ($headers['x-pvebill-timestamp'] ?? '');
        $sig = trim((string) ($headers['x-pvebill-signature'] ?? ''));
        $secret = $key === '' ? null : ($this->secretFor)($key);
        if (
            $secret === null || $secret === '' || !ctype_digit($ts)
            || !hash_equals(Client::sign($secret, $ts, 'POST', $requestUri, $body), $sig)
        ) {
            return $fail(401, ErrorCode::SIGNATURE_INVALID);
        }
        if (abs($now - (int) $ts) > self::WINDOW) {
            return $fail(401, ErrorCode::SIGNATURE_EXPIRED);
        }
        $event = json_decode($body, true);
        if (!is_array($event) || !is_string($event['id'] ?? null) || !is_array($event['operation'] ?? null)) {
            return $fail(400, 'not a pvebill event');
        }
        if (($headers['x-pvebill-event-id'] ?? $event['id']) !== $event['id']) {
            return $fail(400, 'event id header and body differ');
        }
        try {
            $first = ($this->firstSeen)($event['id']);
        } catch (\Throwable $e) {
            return $fail(503, 'event store unavailable: ' . $e->getMessage());
        }
        return ['status' => 204, 'event' => $event, 'duplicate' => !$first, 'error' => null];
    }

    /** One line for WHMCS's activity log. */
    public static function describe(array $event): string
    {
        $op = $event['operation'];
        $line = sprintf(
            'pvebill: %s of %s %s (operation %s)',
            str_replace('_', ' ', (string) ($op['action'] ?? '')),
            (string) ($op['service_id'] ?? ''),
            (string) ($op['state'] ?? ''),
            (string) ($op['id'] ?? '')
        );
        if (isset($op['error']['code'])) {
            $line .= ': ' . ($op['error']['detail'] ?? '') . ' [' . $op['error']['code'] . ']';
        }
        return $line;
    }
}
