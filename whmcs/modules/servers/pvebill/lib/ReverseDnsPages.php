<?php

// Reverse DNS in WHMCS (R55): the client area's page that lists the service's addresses with
// their PTR names and sets one, and the admin tab's view of the IPv6 prefix and the names. The
// names are pvebill's (GET and PUT /v1/services/{id}/rdns); nothing is stored in WHMCS.

declare(strict_types=1);

namespace Pvebill;

trait ReverseDnsPages
{
    /**
     * The client area's reverse DNS page: every address of the service (its IPv4 address, its
     * IPv6 address) and any other address of its IPv6 prefix that has a name, each with its
     * name, where it stands and a form to set it; and a form for another address of the prefix.
     * step=set sends {address, hostname} (a form posted with WHMCS's CSRF token).
     *
     * @param array<string,string> $input step, address, hostname
     */
    public function clientReverseDns(array $params, array $input): array
    {
        $lang = Lang::forClient($params);
        $vars = ['error' => null, 'message' => null, 'rows' => [], 'prefix' => null];
        if (($input['step'] ?? '') === 'set') {
            $res = $this->setReverseDns($params, trim($input['address'] ?? ''), trim($input['hostname'] ?? ''), $lang);
            $vars[$res['ok'] ? 'message' : 'error'] = $res['text'];
        }
        $view = $this->reverseDnsView($params, $lang);
        if ($view['error'] !== null) {
            $vars['error'] = trim(($vars['error'] ?? '') . ' ' . $view['error']);
        }
        $vars['rows'] = $view['rows'];
        $vars['prefix'] = $view['prefix'];
        $vars['other'] = $view['prefix'] === null ? '' : $lang->t('rdns_other_address', ['prefix' => $view['prefix']]);
        return self::customPage($params, $lang, 'ReverseDNS', 'reversedns', $vars);
    }

    /**
     * Sets one name: ok with "saved" (PowerDNS has it) or "pending" (pvebill keeps it and
     * retries), or pvebill's translated refusal.
     *
     * @return array{ok: bool, text: string}
     */
    public function setReverseDns(array $params, string $address, string $hostname, Lang $lang): array
    {
        try {
            $r = $this->client($params, $lang)->request(
                'PUT',
                self::servicePath($params, '/rdns'),
                ['address' => $address, 'hostname' => $hostname],
                [],
                30
            );
        } catch (\Throwable $e) {
            return ['ok' => false, 'text' => $this->unreachable($e)];
        }
        self::log('rdns', ['service_id' => self::serviceId($params), 'address' => $address], $r->body);
        if ($r->isProblem()) {
            return ['ok' => false, 'text' => self::problemText($r, $lang)];
        }
        $status = 'pending';
        foreach ($r->json['rdns'] ?? [] as $rec) {
            if (($rec['address'] ?? '') === $address) {
                $status = (string) ($rec['status'] ?? 'pending');
            }
        }
        return ['ok' => true, 'text' => $lang->t($status === 'synced' ? 'rdns_saved' : 'rdns_pending')];
    }

    /**
     * The service's addresses with their names: one row per address (the service's own first,
     * then the other named addresses of its prefix), and the IPv6 prefix (null without one).
     *
     * @return array{rows: list<array{address: string, hostname: string, status: string,
     *     last_error: string}>, prefix: ?string, error: ?string}
     */
    public function reverseDnsView(array $params, Lang $lang): array
    {
        $out = ['rows' => [], 'prefix' => null, 'error' => null];
        try {
            $c = $this->client($params, $lang);
            $svc = $c->request('GET', self::servicePath($params), null, [], 20);
            $list = $svc->isProblem() ? $svc : $c->request('GET', self::servicePath($params, '/rdns'), null, [], 20);
        } catch (\Throwable $e) {
            $out['error'] = $this->unreachable($e);
            return $out;
        }
        if ($list->isProblem()) {
            $out['error'] = self::problemText($list, $lang);
            return $out;
        }
        $s = $svc->json['service'] ?? [];
        $out['prefix'] = isset($s['ipv6']['prefix']) ? (string) $s['ipv6']['prefix'] : null;
        $named = [];
        foreach ($list->json['rdns'] ?? [] as $rec) {
            $named[(string) ($rec['address'] ?? '')] = $rec;
        }
        $addresses = array_map('strval', $s['ip_addresses'] ?? []);
        foreach (array_keys($named) as $a) {
            if (!in_array($a, $addresses, true)) {
                $addresses[] = $a;
            }
        }
        foreach ($addresses as $a) {
            $rec = $named[$a] ?? null;
            $out['rows'][] = ['address' => $a, 'hostname' => (string) ($rec['hostname'] ?? ''),
                'status' => $lang->t($rec === null ? 'rdns_not_set' : 'rdns_status_' . ($rec['status'] ?? 'pending')),
                'last_error' => (string) ($rec['last_error'] ?? '')];
        }
        return $out;
    }

    /**
     * The admin tab's fields: the IPv6 prefix and the reverse DNS names with where each stands
     * (and the last error, for the operator).
     *
     * @return array<string,string> HTML
     */
    private function adminReverseDnsFields(array $params, Lang $lang): array
    {
        $e = static fn (string $s): string => htmlspecialchars($s, ENT_QUOTES | ENT_HTML5, 'UTF-8');
        $v = $this->reverseDnsView($params, $lang);
        if ($v['error'] !== null) {
            return [$lang->t('admin_tab_rdns') => $e($v['error'])];
        }
        $items = [];
        foreach ($v['rows'] as $r) {
            $items[] = '<li>' . $e($r['address']) . ' → ' . $e($r['hostname'] === '' ? '—' : $r['hostname'])
                . ' (' . $e($r['status']) . ')'
                . ($r['last_error'] === '' ? '' : ': ' . $e($r['last_error'])) . '</li>';
        }
        return [
            $lang->t('admin_tab_prefix') => $e($v['prefix'] ?? $lang->t('not_available')),
            $lang->t('admin_tab_rdns') => $items === [] ? $e($lang->t('rdns_no_addresses'))
                : '<ul>' . implode('', $items) . '</ul>',
        ];
    }
}
