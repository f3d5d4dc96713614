<?php

// pvebill's server manager for FOSSBilling's hosting products: each hosting account is one
// pvebill service (a container or a VM on Proxmox). Every call is signed, every mutation is
// followed until pvebill's operation has ended (success only when it succeeded), a retry of the
// same call sends the same Idempotency-Key, and pvebill's refusals reach the admin translated.
//
// Server fields: host (or ip), port, secure, username = pvebill API client id, access hash (or
// password) = its secret. Optional config: language (Accept-Language, default en), timeout
// (seconds per HTTP request, default 30), wait (seconds pvebill holds an answer, default 20),
// deadline (seconds an operation is followed, default 600).
// Package custom values: plan (pvebill plan code, default the package name), os (required for
// create), guest_type (container or vm, when the plan offers both).

declare(strict_types=1);

require_once __DIR__ . '/Pvebill/ApiError.php';
require_once __DIR__ . '/Pvebill/Api.php';

use Pvebill\Fossbilling\Api;
use Pvebill\Fossbilling\ApiError;

class Server_Manager_Pvebill extends Server_Manager
{
    private ?Api $api = null;

    public static function getForm(): array
    {
        return [
            'label' => 'pvebill (Proxmox VE containers and VMs)',
        ];
    }

    public function init(): void
    {
        $host = (string) ($this->_config['host'] ?: $this->_config['ip'] ?: '');
        if ($host === '') {
            throw new Server_Exception('pvebill: the server\'s hostname (or IP address) must be set');
        }
        $secret = (string) ($this->_config['accesshash'] ?: $this->_config['password'] ?: '');
        $cfg = is_array($this->_config['config'] ?? null) ? $this->_config['config'] : [];
        try {
            $this->api = new Api(
                self::baseUrl($host, (bool) $this->_config['secure'], (int) ($this->_config['port'] ?? 0)),
                trim((string) $this->_config['username']),
                trim($secret),
                (string) ($cfg['language'] ?? 'en'),
                (int) ($cfg['timeout'] ?? 30),
                (int) ($cfg['deadline'] ?? 600),
                (int) ($cfg['wait'] ?? 20)
            );
        } catch (ApiError $e) {
            throw new Server_Exception($e->getMessage());
        }
    }

    /** The base URL from the server's fields; a host that already holds a URL is used as it is. */
    private static function baseUrl(string $host, bool $secure, int $port): string
    {
        if (preg_match('#^https?://#i', $host) === 1) {
            return rtrim($host, '/');
        }
        return ($secure ? 'https://' : 'http://') . $host . ($port > 0 ? ':' . $port : '');
    }

    /**
     * pvebill's service id of an account: the FOSSBilling client and the account's username,
     * which FOSSBilling keeps for the account's whole life (so a retried call names the same
     * service, and two clients' accounts never share one).
     */
    public static function serviceId(Server_Account $account): string
    {
        $client = $account->getClient();
        $id = 'fb-' . ($client !== null ? (string) $client->getId() : '0') . '-' . (string) $account->getUsername();
        $id = preg_replace('/[^A-Za-z0-9._:-]/', '-', $id) ?? $id;
        return substr($id, 0, 64);
    }

    /** The console of the account's guest: a fresh one-time URL (R41). */
    public function getLoginUrl(?Server_Account $account = null): string
    {
        if ($account === null) {
            return '';
        }
        $json = $this->call('POST', '/v1/services/' . rawurlencode(self::serviceId($account)) . '/console', [], [201]);
        return (string) ($json['console']['url'] ?? '');
    }

    public function getResellerLoginUrl(?Server_Account $account = null): string
    {
        return $this->getLoginUrl($account);
    }

    /** A signed read that needs the billing scope: the client id, the secret and the clock are right. */
    public function testConnection(): bool
    {
        $this->call('GET', '/v1/services?limit=1', null, [200]);
        return true;
    }

    /** The account as pvebill has it: suspended or not, and its first address. */
    public function synchronizeAccount(Server_Account $account): Server_Account
    {
        $json = $this->call('GET', '/v1/services/' . rawurlencode(self::serviceId($account)), null, [200]);
        $svc = $json['service'] ?? [];
        $new = clone $account;
        $new->setSuspended(in_array($svc['state'] ?? '', ['suspended', 'limited'], true));
        $ips = $svc['ip_addresses'] ?? [];
        if (is_array($ips) && $ips !== []) {
            $new->setIp((string) $ips[0]);
        }
        return $new;
    }

    /**
     * Creates the guest. A retry (FOSSBilling's own, after a time-out) sends the same service id
     * and Idempotency-Key, so pvebill answers the first create's operation and never makes a
     * second guest (R36).
     */
    public function createAccount(Server_Account $account): bool
    {
        $package = $account->getPackage();
        $body = [
            'service_id' => self::serviceId($account),
            'plan' => self::plan($package),
            'hostname' => (string) $account->getDomain(),
            'os' => (string) $package->getCustomValue('os'),
            'root_password' => (string) $account->getPassword(),
        ];
        $type = (string) $package->getCustomValue('guest_type');
        if ($type !== '') {
            $body['guest_type'] = $type;
        }
        $this->operate('POST', '/v1/services', $body, 'fossbilling:create:' . $body['service_id']);
        return true;
    }

    public function suspendAccount(Server_Account $account): bool
    {
        return $this->mutate($account, 'suspend', ['reason' => 'FOSSBilling']);
    }

    public function unsuspendAccount(Server_Account $account): bool
    {
        return $this->mutate($account, 'unsuspend', []);
    }

    public function cancelAccount(Server_Account $account): bool
    {
        return $this->mutate($account, 'terminate', []);
    }

    public function changeAccountPackage(Server_Account $account, Server_Package $package): bool
    {
        return $this->mutate($account, 'change-plan', ['plan' => self::plan($package)]);
    }

    /**
     * The root password through the VM's guest agent (R56). A container's refusal, or a VM
     * whose agent does not answer, reaches the admin with pvebill's translated reason. No
     * Idempotency-Key: its record would sit in pvebill's database next to a password change,
     * and setting the same password twice is harmless.
     */
    public function changeAccountPassword(Server_Account $account, string $newPassword): bool
    {
        $path = '/v1/services/' . rawurlencode(self::serviceId($account)) . '/password';
        $this->operate('POST', $path, ['root_password' => $newPassword], '');
        return true;
    }

    public function changeAccountUsername(Server_Account $account, string $newUsername): bool
    {
        throw new Server_Exception('pvebill: a service keeps its id; the username cannot be changed');
    }

    public function changeAccountDomain(Server_Account $account, string $newDomain): bool
    {
        throw new Server_Exception('pvebill: the guest\'s hostname is set at create and at reinstall only');
    }

    public function changeAccountIp(Server_Account $account, string $newIp): bool
    {
        throw new Server_Exception('pvebill: addresses come from pvebill\'s address pools and cannot be chosen');
    }

    /** The pvebill plan of a package: its custom value "plan", else its name. */
    private static function plan(Server_Package $package): string
    {
        $plan = (string) $package->getCustomValue('plan');
        return $plan !== '' ? $plan : (string) $package->getName();
    }

    /**
     * One lifecycle action on the account's service, followed until it ended. Its
     * Idempotency-Key names the service, the action, its body and the service's state and last
     * change as read just before: FOSSBilling's retry of the same call finds the same service
     * and sends the same key (pvebill answers the first attempt's operation), while the same
     * action asked again later, after the service changed, is a new request.
     *
     * @param array<string,mixed> $body
     */
    private function mutate(Server_Account $account, string $action, array $body): bool
    {
        $sid = self::serviceId($account);
        $svc = $this->call('GET', '/v1/services/' . rawurlencode($sid), null, [200])['service'] ?? [];
        $key = 'fossbilling:' . $action . ':' . $sid . ':' . substr(hash('sha256', json_encode(
            [$body, $svc['state'] ?? '', $svc['plan'] ?? '', $svc['updated_at'] ?? ''],
            JSON_THROW_ON_ERROR
        )), 0, 24);
        $this->operate('POST', '/v1/services/' . rawurlencode($sid) . '/' . $action, $body, $key);
        return true;
    }

    /**
     * @param array<string,mixed>|null $body
     * @return array<string,mixed>
     */
    private function operate(string $method, string $path, ?array $body, string $key): array
    {
        try {
            return $this->api->operate($method, $path, $body, $key);
        } catch (ApiError $e) {
            throw new Server_Exception($e->getMessage());
        }
    }

    /**
     * One signed request whose status must be one of $ok: the answer, or the translated refusal.
     *
     * @param array<string,mixed>|null $body
     * @param list<int>                $ok
     * @return array<string,mixed>
     */
    private function call(string $method, string $uri, ?array $body, array $ok): array
    {
        try {
            [$status, $json] = $this->api->request($method, $uri, $body);
        } catch (ApiError $e) {
            throw new Server_Exception($e->getMessage());
        }
        if (!in_array($status, $ok, true)) {
            throw new Server_Exception(Api::refusal($status, $json)->getMessage());
        }
        return $json ?? [];
    }
}
