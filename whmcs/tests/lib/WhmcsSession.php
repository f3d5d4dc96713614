<?php

declare(strict_types=1);

namespace Pvebill\Tests;

/**
 * WHMCS's CSRF token functions, as WHMCS defines them for the modules it loads (WHMCS itself is
 * not here): one token a session; generate_token gives it as a form field, a link parameter or
 * plain; check_token compares the request's "token" with it and ends the request when they
 * differ (WHMCS prints "Invalid CSRF Protection Token" and stops; here: an exception).
 */
final class WhmcsSession
{
    public static string $token = '';

    public static function token(): string
    {
        if (self::$token === '') {
            self::$token = bin2hex(random_bytes(20));
        }
        return self::$token;
    }
}
