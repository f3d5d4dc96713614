<?php

// An answer of the signed client (Client.php).

declare(strict_types=1);

namespace Pvebill;

/** One HTTP answer: status, lower-cased headers, raw body and its decoded JSON (or null). */
final class Response
{
    /** @param array<string,string> $headers */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
        public readonly ?array $json,
    ) {
    }

    public function isProblem(): bool
    {
        return $this->status >= 400
            || str_starts_with($this->headers['content-type'] ?? '', 'application/problem+json');
    }

    public function header(string $name): string
    {
        return $this->headers[strtolower($name)] ?? '';
    }
}
