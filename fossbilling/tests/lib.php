<?php

// The assertions and fixtures the tests share: managers built from FOSSBilling-shaped server
// fields, accounts as FOSSBilling's hosting service builds them, signed reads of pvebill and the
// simulator's control API.

declare(strict_types=1);

use Pvebill\Fossbilling\Api;

final class TestFailed extends Exception
{
}

final class Tests
{
    /** @var list<array{string, callable}> */
    public static array $all = [];

    public static function run(string $filter): bool
    {
        $passed = $failed = 0;
        foreach (self::$all as [$name, $fn]) {
            if ($filter !== '' && !str_contains($name, $filter)) {
                continue;
            }
            $t0 = microtime(true);
            try {
                $fn();
                $passed++;
                printf("ok    %s (%.2fs)\n", $name, microtime(true) - $t0);
            } catch (Throwable $e) {
                $failed++;
                printf("FAIL  %s: %s\n      %s:%d\n", $name, $e->getMessage(), $e->getFile(), $e->getLine());
            }
        }
        printf("%d passed, %d failed\n", $passed, $failed);
        return $failed === 0;
    }
}

function test(string $name, callable $fn): void
{
    Tests::$all[] = [$name, $fn];
}

function eq(mixed $want, mixed $got, string $what): void
{
    if ($want !== $got) {
        throw new TestFailed($what . ': got ' . var_export($got, true) . ', want ' . var_export($want, true));
    }
}

function contains(string $haystack, string $needle, string $what): void
{
    if (!str_contains($haystack, $needle)) {
        throw new TestFailed($what . ': "' . $haystack . '" does not contain "' . $needle . '"');
    }
}

/** Runs $fn and returns the Server_Exception it must throw. */
function throws(callable $fn, string $what): Server_Exception
{
    try {
        $fn();
    } catch (Server_Exception $e) {
        return $e;
    }
    throw new TestFailed($what . ': no Server_Exception');
}

function env(string $name): string
{
    $v = getenv($name);
    if ($v === false || $v === '') {
        throw new TestFailed($name . ' is not set (scripts/fossbilling-test.sh sets it)');
    }
    return $v;
}

/** A manager as FOSSBilling builds it from a server's fields (host holds pvebill's URL). */
function manager(array $config = [], ?string $secret = null): Server_Manager_Pvebill
{
    $u = parse_url(env('PVEBILL_URL'));
    return new Server_Manager_Pvebill([
        'host' => $u['host'],
        'port' => $u['port'] ?? null,
        'secure' => ($u['scheme'] ?? 'http') === 'https',
        'username' => env('PVEBILL_CLIENT'),
        'accesshash' => $secret ?? env('PVEBILL_SECRET'),
        'config' => $config + ['wait' => 5],
    ]);
}

/** An account as FOSSBilling's hosting service hands it to the manager. */
function account(int $clientId, string $username, string $plan, string $domain, array $custom = []): Server_Account
{
    $package = (new Server_Package())->setName('Product ' . $plan)
        ->setCustomValues(['plan' => $plan, 'os' => 'debian-12'] + $custom);
    return (new Server_Account())->setClient((new Server_Client())->setId($clientId))->setUsername($username)
        ->setDomain($domain)->setPassword('Fb-Initial-Pass-123')->setPackage($package);
}

/** A signed read of pvebill as the manager's API client. */
function api(string $method, string $uri): array
{
    return (new Api(env('PVEBILL_URL'), env('PVEBILL_CLIENT'), env('PVEBILL_SECRET')))->request($method, $uri);
}

function service(Server_Account $a): array
{
    [$status, $json] = api('GET', '/v1/services/' . Server_Manager_Pvebill::serviceId($a));
    eq(200, $status, 'GET service');
    return $json['service'];
}

/** The simulator's control API. */
function sim(string $method, string $path, ?array $body = null): mixed
{
    $ctx = stream_context_create(['http' => ['method' => $method, 'ignore_errors' => true,
        'header' => 'Content-Type: application/json', 'content' => $body === null ? '' : json_encode($body)]]);
    $raw = file_get_contents(env('PVEBILL_SIM_URL') . $path, false, $ctx);
    return json_decode((string) $raw, true);
}

/** The simulator's requests whose method is $method and whose path matches $re. */
function simRequests(string $method, string $re): array
{
    return array_values(array_filter(
        sim('GET', '/_sim/requests') ?? [],
        static fn (array $r): bool => $r['method'] === $method && preg_match($re, $r['path']) === 1
    ));
}
