<?php
// The tiny assertion library and the fixtures the tests share: WHMCS-shaped $params, a hosting
// table in memory, signed calls and the simulator's control API.

declare(strict_types=1);

use Pvebill\Client;
use Pvebill\FileAttemptStore;
use Pvebill\HostingStore;
use Pvebill\Module;

final class SkipTest extends Exception
{
}

final class AssertionFailed extends Exception
{
}

final class Harness
{
    /** @var list<array{string, callable}> */
    public static array $tests = [];

    public static function run(string $filter): bool
    {
        $passed = $failed = $skipped = 0;
        foreach (self::$tests as [$name, $fn]) {
            if ($filter !== '' && !str_contains($name, $filter)) {
                continue;
            }
            $t0 = microtime(true);
            try {
                $fn();
                $passed++;
                printf("ok    %s (%.2fs)\n", $name, microtime(true) - $t0);
            } catch (SkipTest $e) {
                $skipped++;
                printf("skip  %s: %s\n", $name, $e->getMessage());
            } catch (Throwable $e) {
                $failed++;
                printf("FAIL  %s: %s\n", $name, $e->getMessage());
                if (!$e instanceof AssertionFailed) {
                    printf("      %s:%d\n", $e->getFile(), $e->getLine());
                }
            }
        }
        if ($skipped > 0) {
            printf("(%d skipped)\n", $skipped);
        }
        printf("%d passed, %d failed\n", $passed, $failed);
        return $failed === 0;
    }
}

function test(string $name, callable $fn): void
{
    Harness::$tests[] = [$name, $fn];
}

function skip(string $reason): never
{
    throw new SkipTest($reason);
}

function check(bool $cond, string $msg): void
{
    if (!$cond) {
        throw new AssertionFailed($msg);
    }
}

function eq(mixed $want, mixed $got, string $what = 'value'): void
{
    if ($want !== $got) {
        throw new AssertionFailed($what . ': want ' . var_export($want, true) . ', got ' . var_export($got, true));
    }
}

function contains(string $haystack, string $needle, string $what = 'text'): void
{
    if (!str_contains($haystack, $needle)) {
        throw new AssertionFailed($what . ' ' . var_export($haystack, true) . ' does not contain ' . var_export($needle, true));
    }
}

/** The running server, or a skip when none was started. @return array{url: string, client: string, secret: string, sim: string} */
function server(): array
{
    $url = getenv('PVEBILL_URL') ?: '';
    if ($url === '') {
        skip('no pvebill server (PVEBILL_URL); run scripts/whmcs-test.sh');
    }
    return ['url' => $url, 'client' => getenv('PVEBILL_CLIENT') ?: '', 'secret' => getenv('PVEBILL_SECRET') ?: '',
        'sim' => getenv('PVEBILL_SIM_URL') ?: ''];
}

/** Skips unless the server serves a route (read from its /openapi.yaml). */
function requireRoute(string $method, string $path): void
{
    static $spec = null;
    $spec ??= (string) @file_get_contents(server()['url'] . '/openapi.yaml');
    if (!preg_match('#^  ' . preg_quote($path, '#') . ':\n((?:    .*\n|\n)*)#m', $spec, $m) || !str_contains($m[1], '    ' . strtolower($method) . ':')) {
        skip('the server does not serve ' . $method . ' ' . $path . ' yet');
    }
}

/** WHMCS-shaped $params of a service on the test server (what WHMCS hands a server module). */
function whmcsParams(int $serviceId, array $over = []): array
{
    $s = server();
    $u = parse_url($s['url']);
    $p = [
        'accountid' => $serviceId,
        'serviceid' => $serviceId,
        'addonId' => 0,
        'userid' => 7,
        'domain' => 'web' . $serviceId . '.example.com',
        'username' => '',
        'password' => 'Root-pass-' . $serviceId,
        'packageid' => 3,
        'pid' => 3,
        'serverid' => 1,
        'status' => 'Pending',
        'type' => 'server',
        'producttype' => 'server',
        'moduletype' => 'pvebill',
        'configoption1' => 'ct-2g',
        'configoption2' => 'plan',
        'configoption3' => 'debian-12',
        'customfields' => ['SSH Key' => ''],
        'configoptions' => [],
        'clientsdetails' => ['userid' => 7, 'id' => 7, 'firstname' => 'Ada', 'lastname' => 'Lovelace',
            'email' => 'ada@example.com', 'country' => 'GB', 'language' => 'english'],
        'server' => true,
        'serverid' => 1,
        'serverip' => $u['host'],
        'serverhostname' => $u['host'],
        'serverusername' => $s['client'],
        'serverpassword' => '',
        'serveraccesshash' => $s['secret'],
        'serversecure' => ($u['scheme'] ?? 'http') === 'https',
        'serverport' => (string) ($u['port'] ?? ''),
        'serverhttpprefix' => $u['scheme'] ?? 'http',
    ];
    for ($i = 4; $i <= 24; $i++) {
        $p['configoption' . $i] = '';
    }
    return array_replace_recursive($p, $over);
}

/** A temporary file, removed when the run ends. */
function tempFile(): string
{
    static $files = null;
    if ($files === null) {
        $files = new ArrayObject();
        register_shutdown_function(static function () use ($files): void {
            foreach ($files as $f) {
                @unlink($f);
            }
        });
    }
    $f = tempnam(sys_get_temp_dir(), 'pvebill-test-');
    $files[] = $f;
    return $f;
}

/** A module with its own attempt file (a WHMCS installation) and a budget in seconds. */
function module(int $waitCap = 30, ?string $attemptFile = null, ?HostingStore $hosting = null): Module
{
    $attemptFile ??= tempFile();
    return new Module(new FileAttemptStore($attemptFile), $hosting, $waitCap, 10, getenv('PVEBILL_TEST_TRANSPORT') ?: 'auto');
}

/** A signed request with the test client, decoded. */
function api(string $method, string $path, ?array $body = null, string $lang = 'en'): Pvebill\Response
{
    $s = server();
    return (new Client($s['url'], $s['client'], $s['secret'], $lang))->request($method, $path, $body, [], 70);
}

function service(string $sid): array
{
    $r = api('GET', '/v1/services/' . rawurlencode($sid));
    eq(200, $r->status, 'GET service ' . $sid . ' ' . $r->body);
    return $r->json['service'];
}

/** Calls the simulator's control API. */
function sim(string $method, string $path, ?array $body = null): mixed
{
    $s = server();
    if ($s['sim'] === '') {
        skip('no simulator control URL (PVEBILL_SIM_URL)');
    }
    $ctx = stream_context_create(['http' => ['method' => $method, 'ignore_errors' => true, 'timeout' => 10,
        'header' => "Content-Type: application/json\r\nConnection: close",
        'content' => $body === null ? '' : json_encode($body)]]);
    $raw = file_get_contents($s['sim'] . '/_sim' . $path, false, $ctx);
    check($raw !== false, 'simulator control ' . $method . ' ' . $path . ' failed');
    return json_decode($raw, true);
}

/**
 * The simulator's request log entries matching method, a path regex and form values.
 *
 * @param array<string,string> $form
 */
function simRequests(string $method, string $pathRegex, array $form = []): array
{
    $out = [];
    foreach (sim('GET', '/requests') ?? [] as $r) {
        if ($r['method'] !== $method || !preg_match($pathRegex, $r['path'])) {
            continue;
        }
        foreach ($form as $k => $v) {
            if (!in_array($v, $r['form'][$k] ?? [], true)) {
                continue 2;
            }
        }
        $out[] = $r;
    }
    return $out;
}

/** WHMCS's tblhosting rows in memory: (server, id) → columns. */
final class MemoryHosting implements HostingStore
{
    /** @var array<string, array<string,int|string>> */
    public array $rows = [];

    public function add(int $serverId, int $id): void
    {
        $this->rows[$serverId . '/' . $id] = ['diskusage' => 0, 'disklimit' => 0, 'bwusage' => 0, 'bwlimit' => 0, 'lastupdate' => ''];
    }

    public function updateUsage(int $serverId, int $hostingId, array $fields): bool
    {
        $k = $serverId . '/' . $hostingId;
        if (!isset($this->rows[$k])) {
            return false;
        }
        $this->rows[$k] = array_replace($this->rows[$k], $fields);
        return true;
    }
}

/**
 * A scripted stand-in for pvebill (PHP's built-in server with fake_pvebill.php). answer() queues
 * responses; requests() returns what arrived.
 */
final class FakePvebill
{
    public readonly string $url;
    private string $dir;
    /** @var resource */
    private $proc;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/pvebill-fake-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
        file_put_contents($this->dir . '/responses.json', '[]');
        $sock = stream_socket_server('tcp://127.0.0.1:0');
        $name = stream_socket_get_name($sock, false);
        fclose($sock);
        $this->url = 'http://' . $name;
        $this->proc = proc_open([PHP_BINARY, '-S', $name, __DIR__ . '/fake_pvebill.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes, null, ['FAKE_DIR' => $this->dir] + getenv());
        for ($i = 0; $i < 100; $i++) {
            $c = @stream_socket_client('tcp://' . $name, $errno, $errstr, 0.2);
            if ($c !== false) {
                fclose($c);
                return;
            }
            usleep(50000);
        }
        throw new RuntimeException('the fake pvebill did not start on ' . $name);
    }

    public function __destruct()
    {
        proc_terminate($this->proc);
        proc_close($this->proc);
        foreach (glob($this->dir . '/*') ?: [] as $f) {
            unlink($f);
        }
        rmdir($this->dir);
    }

    public function answer(int $status, mixed $body, ?string $type = null, int $delay = 0): void
    {
        $q = json_decode((string) file_get_contents($this->dir . '/responses.json'), true);
        $q[] = ['status' => $status, 'body' => $body, 'delay' => $delay] + ($type === null ? [] : ['type' => $type]);
        file_put_contents($this->dir . '/responses.json', json_encode($q));
    }

    /** @return list<array{method: string, uri: string, headers: array<string,string>, body: string}> */
    public function requests(): array
    {
        $out = [];
        $log = $this->dir . '/requests.jsonl';
        foreach ((is_file($log) ? file($log, FILE_IGNORE_NEW_LINES) : []) ?: [] as $line) {
            $out[] = json_decode($line, true);
        }
        return $out;
    }

    /** WHMCS server fields pointing at the fake. */
    public function params(int $serviceId, array $over = []): array
    {
        $u = parse_url($this->url);
        return array_replace_recursive(['serviceid' => $serviceId, 'serverid' => 1, 'domain' => 'web' . $serviceId . '.example.com',
            'password' => 'Root-pass-1234', 'configoption1' => 'ct-2g', 'configoption2' => 'plan', 'configoption3' => 'debian-12',
            'customfields' => [], 'configoptions' => [], 'clientsdetails' => ['language' => 'english'],
            'serverhostname' => $u['host'], 'serverport' => (string) $u['port'], 'serversecure' => false,
            'serverusername' => 'whmcs', 'serveraccesshash' => 'fake-secret-0123456789'], $over);
    }
}

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

function generate_token(string $type = 'form'): string
{
    $t = WhmcsSession::token();
    return match ($type) {
        'plain' => $t,
        'link' => '&token=' . $t,
        default => '<input type="hidden" name="token" value="' . $t . '" />',
    };
}

function check_token(string $namespace = 'WHMCS.default'): void
{
    $sent = $_POST['token'] ?? $_GET['token'] ?? '';
    if ($namespace !== 'WHMCS.default' || !is_string($sent) || !hash_equals(WhmcsSession::token(), $sent)) {
        throw new RuntimeException('Invalid CSRF Protection Token');
    }
}

/**
 * Runs $fn as WHMCS would while serving one request of the client area: the method, the query
 * and the posted form; PHP's request globals are restored afterwards.
 */
function asRequest(string $method, array $post, callable $fn, array $get = []): mixed
{
    $saved = [$_SERVER['REQUEST_METHOD'] ?? null, $_POST, $_GET];
    $_SERVER['REQUEST_METHOD'] = $method;
    $_POST = $post;
    $_GET = $get;
    try {
        return $fn();
    } finally {
        [$m, $_POST, $_GET] = $saved;
        if ($m === null) {
            unset($_SERVER['REQUEST_METHOD']);
        } else {
            $_SERVER['REQUEST_METHOD'] = $m;
        }
    }
}

/**
 * Renders one of the module's templates with Smarty, the template engine WHMCS renders them
 * with (Debian: apt-get install smarty4, or smarty3), given the variables WHMCS would assign:
 * the module's own, and WHMCS's CSRF $token.
 */
function render(string $template, array $vars): string
{
    static $loaded = false;
    if (!$loaded) {
        $found = false;
        foreach (['/usr/share/php/smarty4/bootstrap.php', '/usr/share/php/smarty3/bootstrap.php',
            '/usr/share/php/smarty3/Smarty.class.php'] as $f) {
            if (is_file($f)) {
                require_once $f;
                $found = true;
                break;
            }
        }
        check($found, 'Smarty is not installed (Debian: apt-get install smarty4)');
        $loaded = true;
    }
    $s = new Smarty();
    $dir = sys_get_temp_dir() . '/pvebill-smarty-' . getmypid();
    $s->setCompileDir($dir);
    $s->setCacheDir($dir);
    $s->setTemplateDir(__DIR__ . '/../modules/servers/pvebill');
    $s->assign('token', generate_token('plain'));
    foreach ($vars as $k => $v) {
        $s->assign($k, $v);
    }
    $file = str_ends_with($template, '.tpl') ? $template : $template . '.tpl';
    return $s->fetch($file);
}
