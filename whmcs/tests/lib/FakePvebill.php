<?php

declare(strict_types=1);

namespace Pvebill\Tests;

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
        $this->proc = proc_open(
            [PHP_BINARY, '-S', $name, dirname(__DIR__) . '/fake_pvebill.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            ['FAKE_DIR' => $this->dir] + getenv()
        );
        for ($i = 0; $i < 100; $i++) {
            $c = @stream_socket_client('tcp://' . $name, $errno, $errstr, 0.2);
            if ($c !== false) {
                fclose($c);
                return;
            }
            usleep(50000);
        }
        throw new \RuntimeException('the fake pvebill did not start on ' . $name);
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
        return array_replace_recursive(['serviceid' => $serviceId, 'serverid' => 1,
            'domain' => 'web' . $serviceId . '.example.com',
            'password' => 'Root-pass-1234', 'configoption1' => 'ct-2g', 'configoption2' => 'plan',
                'configoption3' => 'debian-12',
            'customfields' => [], 'configoptions' => [], 'clientsdetails' => ['language' => 'english'],
            'serverhostname' => $u['host'], 'serverport' => (string) $u['port'], 'serversecure' => false,
            'serverusername' => 'whmcs', 'serveraccesshash' => 'fake-secret-0123456789'], $over);
    }
}
