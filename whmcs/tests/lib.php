<?php

// The tiny assertion library and the fixtures the tests share: WHMCS-shaped $params, a hosting
// table in memory, signed calls and the simulator's control API.

declare(strict_types=1);

use Pvebill\Client;
use Pvebill\ErrorCode;
use Pvebill\FileAttemptStore;
use Pvebill\Graph;
use Pvebill\HostingStore;
use Pvebill\Lang;
use Pvebill\Module;
use Pvebill\Response;
use Pvebill\Tests\AssertionFailed;
use Pvebill\Tests\FakePvebill;
use Pvebill\Tests\Harness;
use Pvebill\Tests\MemoryHosting;
use Pvebill\Tests\ModuleLog;
use Pvebill\Tests\SkipTest;
use Pvebill\Tests\WhmcsSession;
use Pvebill\Text;

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
        throw new AssertionFailed($what . ' ' . var_export($haystack, true) . ' does not contain '
            . var_export($needle, true));
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
    if (
        !preg_match('#^  ' . preg_quote($path, '#')
        . ':\n((?:    .*\n|\n)*)#m', $spec, $m) || !str_contains($m[1], '    ' . strtolower($method) . ':')
    ) {
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
    $transport = getenv('PVEBILL_TEST_TRANSPORT') ?: 'auto';
    return new Module(new FileAttemptStore($attemptFile), $hosting, $waitCap, 10, $transport);
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
        foreach (
            ['/usr/share/php/smarty4/bootstrap.php', '/usr/share/php/smarty3/bootstrap.php',
            '/usr/share/php/smarty3/Smarty.class.php'] as $f
        ) {
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

/** The requests that could change something: all but reads and the read-only previews. */
function changing(array $requests): array
{
    return array_values(array_filter($requests, static fn (array $r): bool => $r['method'] !== 'GET'
        && !preg_match('#/preview(\?|$)#', $r['uri'])));
}

/**
 * The client area's state-changing forms: the module function and the posted fields.
 *
 * @return array<string, array{callable, array<string,string>}>
 */
function clientForms(): array
{
    return [
        'Power start' => ['pvebill_Power', ['power' => 'start']],
        'Power stop' => ['pvebill_Power', ['power' => 'stop']],
        'Power shutdown' => ['pvebill_Power', ['power' => 'shutdown']],
        'Power reboot' => ['pvebill_Power', ['power' => 'reboot']],
        'Console' => ['pvebill_Console', []],
        'Backups create' => ['pvebill_Backups', ['step' => 'create']],
        'Backups delete' => ['pvebill_Backups', ['step' => 'delete', 'backup_id' => 'vzdump-lxc-100-x.tar.zst']],
        'Backups restore' => ['pvebill_Backups', ['step' => 'restore_confirm', 'intent_id' => 'i-1', 'confirm' => '1']],
        'Snapshots create' => ['pvebill_Snapshots', ['step' => 'create', 'name' => 'before']],
        'Snapshots delete' => ['pvebill_Snapshots', ['step' => 'delete', 'name' => 'before']],
        'Snapshots rollback' => ['pvebill_Snapshots', ['step' => 'rollback', 'name' => 'before',
            'confirm' => 'before']],
        'Reinstall' => ['pvebill_Reinstall', ['step' => 'confirm', 'intent_id' => 'i-1', 'confirm' => '1',
            'root_password' => 'New-root-pass-1']],
        'ReverseDNS set' => ['pvebill_ReverseDNS', ['step' => 'set', 'address' => '203.0.113.10',
            'hostname' => 'mail.example.com']],
    ];
}

/** The refusal text in the output of a module function (a string, or a page's error). */
function refusal(mixed $out): string
{
    return is_string($out) ? $out : (string) ($out['vars']['error'] ?? $out['vars']['pvebill']['error'] ?? '');
}

const LIFECYCLE = 1001;

function sid(int $serviceId): string
{
    return server()['client'] . '-' . $serviceId;
}

function powerButtons(): void
{
    $p = whmcsParams(LIFECYCLE);
    $power = static fn (string $action): int => count(simRequests('POST', '#^/nodes/[^/]+/lxc/[0-9]+/status/'
        . $action . '$#'));
    $stops = $power('stop');
    eq('success', pvebill_Stop($p), 'Stop');
    eq('stopped', service(sid(LIFECYCLE))['power'], 'power after Stop');
    eq($stops + 1, $power('stop'), 'one stop reached Proxmox');
    eq('success', pvebill_Stop($p), 'Stop of a stopped guest');
    eq($stops + 1, $power('stop'), 'a stop of a stopped guest sends nothing');
    $out = pvebill_Reboot($p);
    contains($out, '[guest_not_running]', 'Reboot of a stopped guest');
    contains($out, 'The guest is not running.', 'translated reason');
    eq('success', pvebill_Start($p), 'Start');
    eq('running', service(sid(LIFECYCLE))['power'], 'power after Start');
    $reboots = $power('reboot');
    eq('success', pvebill_Reboot($p), 'Reboot');
    eq($reboots + 1, $power('reboot'), 'one reboot reached Proxmox');
    $shutdowns = count(simRequests('POST', '#/status/shutdown$#', ['forceStop' => '0']));
    eq('success', pvebill_Shutdown($p), 'Shutdown');
    eq('stopped', service(sid(LIFECYCLE))['power'], 'power after Shutdown');
    eq(
        $shutdowns + 1,
        count(simRequests('POST', '#/status/shutdown$#', ['forceStop' => '0'])),
        'a shutdown with forceStop=0'
    );
    eq('success', pvebill_Start($p), 'Start again');

    $de = whmcsParams(LIFECYCLE, ['clientsdetails' => ['language' => 'german'], 'suspendreason' => 'Overdue']);
    eq('success', module()->suspendAccount($de), 'SuspendAccount');
    foreach (['pvebill_Start', 'pvebill_Reboot'] as $fn) {
        $out = $fn($de);
        contains($out, '[service_suspended]', $fn . ' of a suspended service');
        contains($out, 'gesperrt', $fn . ' refusal in German');
    }
    eq('success', module()->unsuspendAccount($p), 'UnsuspendAccount');
    eq('running', service(sid(LIFECYCLE))['power'], 'power after unsuspend');
}

const GRAPHS_SERVICE = 1020;

/** Parses one <svg> element. */
function svgDom(string $svg): DOMDocument
{
    $d = new DOMDocument();
    check(@$d->loadXML($svg, LIBXML_NONET) === true, 'the SVG is not well-formed XML: ' . substr($svg, 0, 200));
    eq('svg', $d->documentElement->localName, 'root element');
    return $d;
}

/** Elements of a class. @return list<DOMElement> */
function svgClass(DOMDocument $d, string $class): array
{
    $out = [];
    foreach ($d->getElementsByTagName('*') as $el) {
        if ($el->getAttribute('class') === $class) {
            $out[] = $el;
        }
    }
    return $out;
}

/** Known points drawn: the points of every polyline and every isolated dot. */
function drawnPoints(DOMDocument $d, ?string $colour = null): int
{
    $n = 0;
    foreach (svgClass($d, 'series') as $pl) {
        if ($colour === null || $pl->getAttribute('stroke') === $colour) {
            $n += count(preg_split('/\s+/', trim($pl->getAttribute('points'))));
        }
    }
    foreach (svgClass($d, 'point') as $c) {
        if ($colour === null || $c->getAttribute('fill') === $colour) {
            $n++;
        }
    }
    return $n;
}

/** Texts of the elements of a class. @return list<string> */
function svgTexts(DOMDocument $d, string $class): array
{
    return array_map(static fn (DOMElement $e): string => $e->textContent, svgClass($d, $class));
}

function lastOf(array $a): mixed
{
    return $a === [] ? null : $a[array_key_last($a)];
}

/** Nothing in the SVG can make a browser fetch anything or run anything. */
function assertSelfContained(DOMDocument $d): void
{
    foreach ($d->getElementsByTagName('*') as $el) {
        check(
            !in_array(strtolower($el->localName), ['script', 'image', 'use', 'foreignobject', 'a', 'style',
                'iframe'], true),
            'element <' . $el->localName . '> in a graph'
        );
        foreach ($el->attributes as $attr) {
            $name = strtolower($attr->nodeName);
            check(
                !in_array($name, ['href', 'xlink:href', 'src'], true) && !str_starts_with($name, 'on'),
                'attribute ' . $name . ' in a graph'
            );
            check(
                !preg_match('#url\(|https?:|//#i', $attr->nodeValue),
                'a reference in ' . $name . '="' . $attr->nodeValue . '"'
            );
        }
    }
    // The one namespace declaration names SVG; it is no request.
    eq('http://www.w3.org/2000/svg', $d->documentElement->namespaceURI, 'namespace');
}

function logModuleCall(
    string $module,
    string $action,
    mixed $request,
    mixed $response,
    mixed $processed = null,
    array $replaceVars = []
): void {
    ModuleLog::$calls[] = ['action' => $action, 'request' => $request, 'response' => $response,
        'replace' => $replaceVars];
}

/** Starts CreateAccount of $p in another PHP process (a second WHMCS request); returns it. */
function startCreate(array $p, string $attempts): array
{
    $code = 'require ' . var_export(__DIR__ . '/bootstrap.php', true) . ';'

        . 'echo module(30, getenv("ATTEMPTS"))->createAccount(json_decode(getenv("PARAMS"), true));';
    $proc = proc_open(
        [PHP_BINARY, '-r', $code],
        [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
        $pipes,
        null,
        ['ATTEMPTS' => $attempts, 'PARAMS' => json_encode($p)] + getenv()
    );
    check(is_resource($proc), 'the second PHP process did not start');
    return [$proc, $pipes];
}

/** @return array<string, array<string,string>> every language file's texts, by WHMCS name */
function langFiles(): array
{
    $out = [];
    foreach (glob(Lang::dir() . '/*.php') ?: [] as $f) {
        $out[basename($f, '.php')] = Lang::read(basename($f, '.php'));
    }
    ksort($out);
    return $out;
}

/** @return list<string> the {placeholders} of a text, sorted */
function placeholders(string $text): array
{
    preg_match_all('/\{[a-z_]+\}/', $text, $m);
    $p = array_unique($m[0]);
    sort($p);
    return $p;
}

const RENDER_SERVICE = 1030;

function renderParams(string $language): array
{
    return whmcsParams(RENDER_SERVICE, ['configoption1' => 'flex-2g', 'configoption2' => 'container',
        'clientsdetails' => ['language' => $language]]);
}

/** The rendered page's visible text, whitespace folded. */
function visibleText(string $html): string
{
    $text = html_entity_decode(strip_tags(str_replace('<', ' <', $html)), ENT_QUOTES | ENT_HTML5, 'UTF-8');
    return trim((string) preg_replace('/\s+/u', ' ', $text));
}

/** The forms of a rendered page: method, action and hidden fields. @return list<array<string,mixed>> */
function formsOf(string $html): array
{
    $d = new DOMDocument();
    @$d->loadHTML('<?xml encoding="UTF-8"><body>' . $html . '</body>');
    $out = [];
    foreach ($d->getElementsByTagName('form') as $f) {
        $hidden = [];
        foreach ($f->getElementsByTagName('input') as $in) {
            if ($in->getAttribute('type') === 'hidden') {
                $hidden[$in->getAttribute('name')] = $in->getAttribute('value');
            }
        }
        $out[] = ['method' => $f->getAttribute('method'), 'action' => $f->getAttribute('action'), 'hidden' => $hidden];
    }
    return $out;
}

/** Every page of the module names the service in each breadcrumb link. */
function assertBreadcrumb(array $page, string $what): void
{
    check(count($page['breadcrumb'] ?? []) >= 2, $what . ': a breadcrumb');
    foreach (array_keys($page['breadcrumb']) as $link) {
        contains($link, '&id=' . RENDER_SERVICE, $what . ' breadcrumb');
    }
}

function op(string $state, string $id = '8a4b5a0e-4f7c-4d0a-9d55-0c7c1c1e2f10'): array
{
    return ['operation' => ['id' => $id, 'service_id' => 'whmcs-7', 'action' => 'suspend', 'state' => $state,
        'stage' => 'stop',
        'created_at' => '2026-11-29T10:00:00Z', 'updated_at' => '2026-11-29T10:00:00Z']];
}

function keys(FakePvebill $f): array
{
    return array_values(array_map(
        static fn ($r) => $r['headers']['idempotency-key'] ?? '',
        array_filter($f->requests(), static fn ($r) => $r['method'] === 'POST')
    ));
}

// sync_test.php: services 1040 (a VM) and 1041 (a container).
const SYNC_VM = 1040;
const SYNC_CT = 1041;

function syncVm(array $over = []): array
{
    $vm = ['configoption1' => 'flex-2g', 'configoption2' => 'vm'];
    return whmcsParams(SYNC_VM, array_replace_recursive($vm, $over));
}

function syncCt(array $over = []): array
{
    return whmcsParams(SYNC_CT, $over);
}

/** Runs $fn with the module the pvebill_* functions use set to this transport's. */
function withModule(callable $fn): mixed
{
    Module::setInstance(module());
    try {
        return $fn();
    } finally {
        Module::setInstance(null);
    }
}


/** The set-user-password calls that reached the simulator's guest agent with $password for root. */
function agentPasswordCalls(string $password): int
{
    return count(simRequests('POST', '#/qemu/[0-9]+/agent/set-user-password$#', ['username' => 'root',
        'password' => $password]));
}


/** GETs a URL: the status code and the body. @return array{int, string} */
function httpGet(string $url): array
{
    $ctx = stream_context_create(['http' => ['ignore_errors' => true, 'timeout' => 10]]);
    $body = (string) file_get_contents($url, false, $ctx);
    $status = preg_match('#^HTTP/\S+ (\d{3})#', $http_response_header[0] ?? '', $m) ? (int) $m[1] : 0;
    return [$status, $body];
}


/** /v1/usage of one service for a period, as the test reads it itself. */
function usageOf(string $sid, string $from, string $to): array
{
    $r = api('GET', '/v1/usage?from=' . rawurlencode($from) . '&to=' . rawurlencode($to) . '&service_id='
        . rawurlencode($sid));
    eq(200, $r->status, 'usage ' . $r->body);
    return $r->json['services'][0] ?? [];
}

/** A service with an IPv4 address and an IPv6 /64, as GET /v1/services/{id} answers it. */
function rdnsService(): array
{
    return ['service' => ['service_id' => 'whmcs-82', 'state' => 'active', 'power' => 'running',
        'guest_type' => 'vm', 'plan' => 'vm-v6', 'hostname' => 'web82.example.com',
        'ip_addresses' => ['203.0.113.10', '2001:db8::1'],
        'ipv6' => ['prefix' => '2001:db8::/64', 'address' => '2001:db8::1', 'gateway' => 'fe80::1'],
        'monitoring' => []]];
}

/** The service's records: the IPv4 name published, one more address of the prefix pending. */
function rdnsRecords(): array
{
    return ['rdns' => [
        ['address' => '203.0.113.10', 'hostname' => 'mail.example.com', 'status' => 'synced', 'attempts' => 0,
            'last_error' => null, 'synced_at' => '2026-12-04T22:10:03Z', 'updated_at' => '2026-12-04T22:10:03Z'],
        ['address' => '2001:db8::25', 'hostname' => 'v6.example.com', 'status' => 'pending', 'attempts' => 1,
            'last_error' => 'powerdns PATCH zone 8.b.d.0.1.0.0.2.ip6.arpa.: connection refused', 'synced_at' => null,
            'updated_at' => '2026-12-04T22:10:04Z'],
    ]];
}
