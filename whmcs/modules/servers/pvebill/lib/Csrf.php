<?php

// The client area's guard against cross-site requests: a form that changes something is sent as a
// POST with WHMCS's CSRF token ({$token} in the templates), and WHMCS's own check_token accepts
// it. Anything else (a GET link, a POST from another site, one with a stale or wrong token) is
// refused before a request to pvebill is made.

declare(strict_types=1);

namespace Pvebill;

final class Csrf
{
    /** WHMCS's namespace of the client area's form tokens. */
    public const NAMESPACE = 'WHMCS.default';

    /**
     * True when this request is a POST that carries a token WHMCS's check_token accepts. Outside
     * WHMCS (no check_token) nothing passes: the guard fails closed. check_token ends the request
     * or throws on a bad token; a throw or a false answer is a refusal here.
     */
    public static function passed(): bool
    {
        if (strtoupper((string) ($_SERVER['REQUEST_METHOD'] ?? '')) !== 'POST') {
            return false;
        }
        $token = $_POST['token'] ?? null;
        if (!is_string($token) || $token === '' || !function_exists('check_token')) {
            return false;
        }
        try {
            return check_token(self::NAMESPACE) !== false;
        } catch (\Throwable) {
            return false;
        }
    }
}
