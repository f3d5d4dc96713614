<?php

// pvebill's signed HTTP client: every request carries X-Pvebill-Key, X-Pvebill-Timestamp and
// X-Pvebill-Signature (v1 = hex HMAC-SHA256 over timestamp "\n" METHOD "\n" request URI "\n" raw
// body), JSON in and out. Uses cURL when the extension is loaded, PHP's HTTP stream otherwise.

declare(strict_types=1);

namespace Pvebill;

final class Client
{
    public const USER_AGENT = 'pvebill-whmcs/1';

    /**
     * @param string $baseUrl   scheme, host and port, e.g. https://pvebill.example.com:8443
     * @param string $transport "curl", "stream" or "auto" (cURL when loaded)
     */
    public function __construct(
        private readonly string $baseUrl,
        private readonly string $clientId,
        private readonly string $secret,
        private readonly string $language = 'en',
        private readonly string $transport = 'auto',
        private readonly int $connectTimeout = 10,
    ) {
        if ($this->clientId === '' || $this->secret === '') {
            throw new \InvalidArgumentException(
                'pvebill server: the username (API client id) and the access hash (secret) must be set'
            );
        }
    }

    /**
     * Builds the client from WHMCS's server fields: hostname (or IP address), secure, port,
     * username = API client id, access hash = secret. A hostname that already holds a URL
     * (https://…) is used as it is.
     */
    public static function fromParams(array $params, string $language = 'en', string $transport = 'auto'): self
    {
        return new self(
            self::baseUrl($params),
            trim((string) ($params['serverusername'] ?? '')),
            trim((string) ($params['serveraccesshash'] ?? '')),
            $language,
            $transport
        );
    }

    public static function baseUrl(array $params): string
    {
        $host = trim((string) ($params['serverhostname'] ?? ''));
        if ($host === '') {
            $host = trim((string) ($params['serverip'] ?? ''));
        }
        if ($host === '') {
            throw new \InvalidArgumentException('pvebill server: the hostname (or IP address) must be set');
        }
        if (preg_match('#^https?://#i', $host)) {
            return rtrim($host, '/');
        }
        $secure = $params['serversecure'] ?? false;
        $secure = $secure === true || $secure === 'on' || $secure === '1' || $secure === 1;
        $url = ($secure ? 'https://' : 'http://') . $host;
        $port = (int) ($params['serverport'] ?? 0);
        if ($port > 0) {
            $url .= ':' . $port;
        }
        return $url;
    }

    /** The client's secret (to key digests that must not be guessable from pvebill's side). */
    public function secret(): string
    {
        return $this->secret;
    }

    /** The v1 signature of a request (docs/api.md, Signing). */
    public static function sign(
        string $secret,
        string $timestamp,
        string $method,
        string $requestUri,
        string $body
    ): string {
        return 'v1=' . hash_hmac('sha256', $timestamp . "\n" . $method . "\n" . $requestUri . "\n" . $body, $secret);
    }

    /**
     * Sends one signed request. $body null sends none; an array is sent as a JSON object.
     *
     * @param array<string,string> $headers extra headers (Idempotency-Key)
     * @throws TransportError when no answer arrived
     */
    public function request(
        string $method,
        string $path,
        ?array $body = null,
        array $headers = [],
        int $timeout = 30
    ): Response {
        $raw = $body === null ? '' : self::encode($body);
        // A signature is accepted once (R47): two identical requests signed within the same
        // second would carry the same one, so a request refused as signature_replayed is
        // signed again with an earlier timestamp (the window is 300 s) and sent once more.
        $now = time();
        for ($attempt = 0;; $attempt++) {
            $resp = $this->send($method, $path, $raw, $body !== null, $headers, $timeout, $now - $attempt);
            $replayed = $resp->status === 401 && ($resp->json['code'] ?? '') === ErrorCode::SIGNATURE_REPLAYED;
            if (!$replayed || $attempt >= self::RESIGN_ATTEMPTS) {
                return $resp;
            }
        }
    }

    /** How many times a request refused as signature_replayed is signed again. */
    private const RESIGN_ATTEMPTS = 3;

    /**
     * Signs and sends one request at timestamp $ts.
     *
     * @param array<string,string> $headers extra headers (Idempotency-Key)
     * @throws TransportError when no answer arrived
     */
    private function send(
        string $method,
        string $path,
        string $raw,
        bool $hasBody,
        array $headers,
        int $timeout,
        int $ts
    ): Response {
        $all = [
            'Accept' => 'application/json, application/problem+json',
            'Accept-Language' => $this->language,
            'User-Agent' => self::USER_AGENT,
            'X-Pvebill-Key' => $this->clientId,
            'X-Pvebill-Timestamp' => (string) $ts,
            'X-Pvebill-Signature' => self::sign($this->secret, (string) $ts, $method, $path, $raw),
        ];
        if ($hasBody) {
            $all['Content-Type'] = 'application/json';
        }
        foreach ($headers as $k => $v) {
            $all[$k] = $v;
        }
        $lines = [];
        foreach ($all as $k => $v) {
            $lines[] = $k . ': ' . $v;
        }
        $url = $this->baseUrl . $path;
        $useCurl = $this->transport === 'curl' || ($this->transport === 'auto' && function_exists('curl_init'));
        [$status, $hdrs, $respBody] = $useCurl
            ? $this->viaCurl($method, $url, $lines, $raw, $timeout)
            : $this->viaStream($method, $url, $lines, $raw, $timeout);
        $json = null;
        if ($respBody !== '') {
            $decoded = json_decode($respBody, true);
            $json = is_array($decoded) ? $decoded : null;
        }
        return new Response($status, $hdrs, $respBody, $json);
    }

    /** JSON of a body: an empty array is the empty object, slashes stay unescaped. */
    public static function encode(array $body): string
    {
        $out = json_encode(
            $body === [] ? new \stdClass() : $body,
            JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR
        );
        return $out;
    }

    /** @return array{int, array<string,string>, string} */
    private function viaCurl(string $method, string $url, array $lines, string $raw, int $timeout): array
    {
        $ch = curl_init($url);
        $hdrs = [];
        curl_setopt_array($ch, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_CONNECTTIMEOUT => $this->connectTimeout,
            CURLOPT_TIMEOUT => $timeout,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_SSL_VERIFYPEER => true,
            CURLOPT_SSL_VERIFYHOST => 2,
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$hdrs): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $hdrs[strtolower(trim($parts[0]))] = trim($parts[1]);
                }
                return strlen($line);
            },
        ]);
        if ($raw !== '' || $method === 'POST' || $method === 'PUT') {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $raw);
        }
        $body = curl_exec($ch);
        if ($body === false) {
            $err = curl_error($ch);
            curl_close($ch);
            throw new TransportError('no answer from pvebill at ' . $this->baseUrl . ': ' . $err);
        }
        $status = (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        curl_close($ch);
        return [$status, $hdrs, (string) $body];
    }

    /** @return array{int, array<string,string>, string} */
    private function viaStream(string $method, string $url, array $lines, string $raw, int $timeout): array
    {
        $lines[] = 'Connection: close';
        $lines[] = 'Content-Length: ' . strlen($raw);
        $ctx = stream_context_create([
            'http' => [
                'method' => $method,
                'header' => implode("\r\n", $lines),
                'content' => $raw,
                'timeout' => $timeout,
                'ignore_errors' => true,
                'follow_location' => 0,
                'protocol_version' => 1.1,
            ],
            'ssl' => ['verify_peer' => true, 'verify_peer_name' => true],
        ]);
        $err = null;
        set_error_handler(static function (int $no, string $msg) use (&$err): bool {
            $err = $msg;
            return true;
        });
        try {
            $body = file_get_contents($url, false, $ctx);
            $responseHeaders = function_exists('http_get_last_response_headers')
                ? (http_get_last_response_headers() ?? [])
                : ($http_response_header ?? []);
        } finally {
            restore_error_handler();
        }
        if ($body === false || $responseHeaders === []) {
            throw new TransportError('no answer from pvebill at ' . $this->baseUrl . ': ' . ($err ?? 'unknown error'));
        }
        $status = 0;
        $hdrs = [];
        foreach ($responseHeaders as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m)) {
                $status = (int) $m[1];
                $hdrs = [];
                continue;
            }
            $parts = explode(':', $line, 2);
            if (count($parts) === 2) {
                $hdrs[strtolower(trim($parts[0]))] = trim($parts[1]);
            }
        }
        return [$status, $hdrs, $body];
    }
}
