<?php

// The module's behaviour behind WHMCS's pvebill_* functions: building requests from WHMCS's
// $params, the Idempotency-Key of each attempt, waiting within PHP's time limit, and turning
// pvebill's answers into WHMCS's "success" or an error text.

declare(strict_types=1);

namespace Pvebill;

final class Module
{
    use ReverseDnsPages;

    /** Product setting (configoption2): where the guest type comes from. */
    public const GUEST_TYPE_PLAN = 'plan';
    public const GUEST_TYPE_CONTAINER = 'container';
    public const GUEST_TYPE_VM = 'vm';
    public const GUEST_TYPE_OPTION = 'option';

    /** Names of the configurable options and the custom field the module reads. */
    public const OPTION_GUEST_TYPE = 'Guest Type';
    public const OPTION_OS = 'Operating System';
    public const FIELD_SSH_KEY = 'SSH Key';

    /** The longest ?wait= the API accepts. */
    public const MAX_WAIT = 60;

    private const TERMINAL = ['succeeded', 'failed', 'needs_reconciliation'];
    /** The power actions pvebill offers (R40), each its own route. */
    public const POWER_ACTIONS = ['start', 'stop', 'shutdown', 'reboot'];

    private static ?Module $instance = null;

    /**
     * @param int    $waitCap   the longest a call waits for an operation (seconds, at most 60)
     * @param int    $margin    seconds kept free before PHP's max_execution_time
     * @param string $transport "auto", "curl" or "stream"
     */
    public function __construct(
        private readonly AttemptStore $attempts,
        private readonly ?HostingStore $hosting = null,
        private readonly int $waitCap = 50,
        private readonly int $margin = 10,
        private readonly string $transport = 'auto',
    ) {
        $this->lang = Lang::named(Lang::FALLBACK);
    }

    /** The language of the call in hand (set with its client): the module's own words in it. */
    private Lang $lang;

    /** The last "In progress" text this module returned, so that a page shows it as news, not as an error. */
    private ?string $pending = null;

    /** The module WHMCS uses: attempts and usage in WHMCS's database. */
    public static function instance(): self
    {
        if (self::$instance === null) {
            self::$instance = CapsuleAttemptStore::available()
                ? new self(new CapsuleAttemptStore(), new CapsuleHostingStore())
                : new self(new FileAttemptStore(sys_get_temp_dir() . '/pvebill-whmcs-attempts.json'));
        }
        return self::$instance;
    }

    /** Replaces the module the pvebill_* functions use (null: back to the default). */
    public static function setInstance(?self $m): void
    {
        self::$instance = $m;
    }

    // ---- WHMCS metadata and product settings ------------------------------------------------

    public static function metaData(): array
    {
        return [
            'DisplayName' => 'pvebill (Proxmox VE)',
            'APIVersion' => '1.1',
            'RequiresServer' => true,
            'DefaultNonSSLPort' => '8080',
            'DefaultSSLPort' => '443',
            // Single sign-on opens the console (R41), labelled as the overview's button.
            'ServiceSingleSignOnLabel' => Lang::forClient([])->t('console'),
            'AdminSingleSignOnLabel' => Lang::forAdmin()->t('console'),
            // Server Sync Tool (ListAccounts): an account is the pvebill service id; its plan is
            // the product's Module Settings "Plan".
            'ListAccountsUniqueIdentifierDisplayName' => 'pvebill service id',
            'ListAccountsUniqueIdentifierField' => 'uniqueIdentifier',
            'ListAccountsProductField' => 'configoption1',
        ];
    }

    /**
     * The product's Module Settings: configoption1 plan, configoption2 guest type, configoption3 OS
     * (WHMCS keeps them by position, so the labels are in the admin's language).
     */
    public static function configOptions(): array
    {
        $l = Lang::forAdmin();
        return [
            $l->t('admin_cfg_plan') => [
                'Type' => 'text',
                'Size' => '25',
                'Loader' => 'pvebill_PlanLoader',
                'SimpleMode' => true,
                'Description' => $l->t('admin_cfg_plan_desc'),
            ],
            $l->t('admin_cfg_guest_type') => [
                'Type' => 'dropdown',
                'Options' => [
                    self::GUEST_TYPE_PLAN => $l->t('admin_cfg_guest_plan'),
                    self::GUEST_TYPE_CONTAINER => $l->t('container'),
                    self::GUEST_TYPE_VM => $l->t('vm'),
                    self::GUEST_TYPE_OPTION => $l->t('admin_cfg_guest_option', ['option' => self::OPTION_GUEST_TYPE]),
                ],
                'Default' => self::GUEST_TYPE_PLAN,
                'SimpleMode' => true,
                'Description' => $l->t('admin_cfg_guest_type_desc'),
            ],
            $l->t('admin_cfg_os') => [
                'Type' => 'text',
                'Size' => '25',
                'Default' => 'debian-12',
                'SimpleMode' => true,
                'Description' => $l->t('admin_cfg_os_desc', ['option' => self::OPTION_OS]),
            ],
        ];
    }

    /** Plan codes for the product settings' dropdown (WHMCS "Loader"). @return array<string,string> */
    public function planLoader(array $params): array
    {
        $r = $this->client($params)->request('GET', '/v1/plans', null, [], 20);
        if ($r->isProblem()) {
            throw new \RuntimeException(self::problemText($r, $this->lang));
        }
        $out = [];
        foreach ($r->json['plans'] ?? [] as $plan) {
            $out[$plan['code']] = $plan['name'] . ' (' . implode(', ', $plan['guest_types'] ?? []) . ')';
        }
        return $out;
    }

    // ---- lifecycle --------------------------------------------------------------------------

    public function createAccount(array $params): string
    {
        try {
            $body = $this->createBody($params);
        } catch (\InvalidArgumentException $e) {
            return 'pvebill: ' . $e->getMessage();
        }
        return $this->mutate($params, 'create', '/v1/services', $body);
    }

    public function suspendAccount(array $params): string
    {
        $reason = trim((string) ($params['suspendreason'] ?? ''));
        $body = $reason === '' ? []
            : ['reason' => preg_match('/^.{0,255}/us', $reason, $m) ? $m[0] : substr($reason, 0, 255)];
        return $this->mutate($params, 'suspend', self::servicePath($params, '/suspend'), $body);
    }

    public function unsuspendAccount(array $params): string
    {
        return $this->mutate($params, 'unsuspend', self::servicePath($params, '/unsuspend'), []);
    }

    /**
     * A power action of the guest (start, stop, shutdown, reboot), for the client-area and admin
     * buttons. "success" only once pvebill read the power state back; a refusal (a suspended
     * service's start or reboot, a reboot of a stopped guest, a shutdown that ran out of time)
     * is pvebill's translated detail with its code.
     */
    public function powerAction(array $params, string $action): string
    {
        if (!in_array($action, self::POWER_ACTIONS, true)) {
            return 'pvebill: unknown power action ' . $action;
        }
        return $this->mutate($params, $action, self::servicePath($params, '/' . $action), []);
    }

    public function terminateAccount(array $params): string
    {
        return $this->mutate($params, 'terminate', self::servicePath($params, '/terminate'), []);
    }

    public function changePackage(array $params): string
    {
        $plan = trim((string) ($params['configoption1'] ?? ''));
        if ($plan === '') {
            return 'pvebill: the product has no plan code (Module Settings, "Plan")';
        }
        return $this->mutate($params, 'change_plan', self::servicePath($params, '/change-plan'), ['plan' => $plan]);
    }

    /**
     * WHMCS's ChangePassword: the new root password ($params['password']) through pvebill's
     * password operation (R56), followed to its end. "success" once pvebill set it; a refusal
     * (a container, or a VM whose guest agent does not answer) is pvebill's translated reason.
     * The password goes to WHMCS's log only as a value to mask, and nowhere else.
     */
    public function changePassword(array $params): string
    {
        $password = (string) ($params['password'] ?? '');
        if ($password === '') {
            return 'pvebill: ' . Lang::forClient($params)->t('password_missing');
        }
        return $this->mutate(
            $params,
            'password',
            self::servicePath($params, '/password'),
            ['root_password' => $password]
        );
    }

    /**
     * WHMCS's single sign-on (the client's "Log in to control panel" and the admin's button): a
     * fresh one-time console URL (R41), or the refusal translated.
     *
     * @return array{success: bool, redirectTo?: string, errorMsg?: string}
     */
    public function singleSignOn(array $params, bool $admin): array
    {
        $res = $this->openConsole($params, $admin ? Lang::forAdmin() : null);
        if ($res['url'] === null) {
            return ['success' => false, 'errorMsg' => (string) $res['error']];
        }
        return ['success' => true, 'redirectTo' => $res['url']];
    }

    /** WHMCS's service statuses (WHMCS\Service\Status) of pvebill's service states. */
    private const SYNC_STATUS = [
        'provisioning' => 'Pending',
        'active' => 'Active',
        'needs_reconciliation' => 'Active',
        'suspended' => 'Suspended',
        'limited' => 'Suspended',
        'terminated' => 'Terminated',
        'failed' => 'Terminated',
    ];

    /**
     * WHMCS's ListAccounts (Server Sync Tool): every service of this API client, read page by
     * page from GET /v1/services ($limit a page).
     *
     * @return array{success: bool, accounts?: list<array<string,string>>, error?: string}
     */
    public function listAccounts(array $params, int $limit = 1000): array
    {
        $accounts = [];
        try {
            $c = $this->client($params, Lang::forAdmin());
            $cursor = null;
            do {
                $q = '/v1/services?limit=' . $limit . ($cursor !== null ? '&cursor=' . rawurlencode($cursor) : '');
                $r = $c->request('GET', $q, null, [], 60);
                if ($r->isProblem()) {
                    return ['success' => false, 'error' => self::problemText($r, $this->lang)];
                }
                foreach ($r->json['services'] ?? [] as $s) {
                    $accounts[] = self::account($s);
                }
                $cursor = $r->json['next_cursor'] ?? null;
            } while (is_string($cursor) && $cursor !== '');
        } catch (\Throwable $e) {
            return ['success' => false, 'error' => $this->unreachable($e)];
        }
        self::log('ListAccounts', ['server' => (int) ($params['serverid'] ?? 0)], ['accounts' => count($accounts)]);
        return ['success' => true, 'accounts' => $accounts];
    }

    /** One service as WHMCS's Server Sync Tool reads an account. @return array<string,string> */
    public static function account(array $s): array
    {
        $created = strtotime((string) ($s['created_at'] ?? ''));
        $ip = (string) ($s['ip_addresses'][0] ?? '');
        return [
            'email' => '',
            'username' => '',
            'domain' => (string) ($s['hostname'] ?? ''),
            'uniqueIdentifier' => (string) ($s['service_id'] ?? ''),
            'product' => (string) ($s['plan'] ?? ''),
            'primaryip' => (string) preg_replace('#/\d+$#', '', $ip),
            'created' => $created === false ? '' : gmdate('Y-m-d H:i:s', $created),
            'status' => self::SYNC_STATUS[(string) ($s['state'] ?? '')] ?? 'Active',
        ];
    }

    /** Checks the URL, the signature and the billing scope. @return array{success: bool, error: string} */
    public function testConnection(array $params): array
    {
        try {
            $c = $this->client($params);
            $r = $c->request('GET', '/v1/plans', null, [], 20);
            if (!$r->isProblem()) {
                $now = gmdate('Y-m-d\TH:i:s\Z');
                $from = gmdate('Y-m-d\TH:i:s\Z', time() - 300);
                $query = '?from=' . rawurlencode($from) . '&to=' . rawurlencode($now) . '&limit=1';
                $r = $c->request('GET', '/v1/usage' . $query, null, [], 20);
            }
            if ($r->isProblem()) {
                return ['success' => false, 'error' => self::problemText($r, $this->lang)];
            }
            return ['success' => true, 'error' => ''];
        } catch (\Throwable $e) {
            return ['success' => false, 'error' => $this->unreachable($e)];
        }
    }

    /**
     * Daily: this month's bandwidth and the period's largest disk use, with their limits, in MB,
     * into every hosting row of this server whose pvebill service belongs to this client.
     */
    public function usageUpdate(array $params): string
    {
        if ($this->hosting === null) {
            return 'pvebill: usage cannot be written here (WHMCS database not available)';
        }
        $serverId = (int) ($params['serverid'] ?? 0);
        $prefix = trim((string) ($params['serverusername'] ?? '')) . '-';
        try {
            $c = $this->client($params);
            $from = gmdate('Y-m-01\T00:00:00\Z');
            $to = gmdate('Y-m-d\TH:i:s\Z', time() + 1);
            $cursor = null;
            $updated = 0;
            do {
                $q = '/v1/usage?from=' . rawurlencode($from) . '&to=' . rawurlencode($to) . '&limit=200';
                if ($cursor !== null) {
                    $q .= '&cursor=' . rawurlencode($cursor);
                }
                $r = $c->request('GET', $q, null, [], 60);
                if ($r->isProblem()) {
                    return self::problemText($r, $this->lang);
                }
                foreach ($r->json['services'] ?? [] as $u) {
                    $sid = (string) $u['service_id'];
                    if (!str_starts_with($sid, $prefix) || !ctype_digit(substr($sid, strlen($prefix)))) {
                        continue;
                    }
                    $fields = self::usageFields($u);
                    if ($this->hosting->updateUsage($serverId, (int) substr($sid, strlen($prefix)), $fields)) {
                        $updated++;
                    }
                }
                $cursor = $r->json['next_cursor'] ?? null;
            } while ($cursor !== null && $cursor !== '');
            self::log('UsageUpdate', ['server' => $serverId], ['updated' => $updated]);
            return 'success';
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
    }

    /**
     * The hosting columns of one service's usage (docs/api.md, Usage); a figure pvebill does not know
     * leaves its column as it is.
     *
     * @return array<string,int|string>
     */
    public static function usageFields(array $u): array
    {
        $fields = ['lastupdate' => date('Y-m-d H:i:s')];
        // WHMCS has one disk figure: the guest's largest disk use plus its backups (R42), so
        // that the disk limit covers both; backups alone count when the disk is not known.
        $backups = $u['backup_bytes'] ?? null;
        if (($u['disk_max_bytes'] ?? null) !== null || $backups !== null) {
            $fields['diskusage'] = Text::megabytes(($u['disk_max_bytes'] ?? 0) + ($backups ?? 0));
        }
        if (($u['disk_limit_bytes'] ?? null) !== null) {
            $fields['disklimit'] = Text::megabytes($u['disk_limit_bytes']);
        }
        if (($u['netin_bytes'] ?? null) !== null || ($u['netout_bytes'] ?? null) !== null) {
            $fields['bwusage'] = Text::megabytes(($u['netin_bytes'] ?? 0) + ($u['netout_bytes'] ?? 0));
        }
        // WHMCS reads a limit of 0 as unlimited: null (no allowance) is exactly that.
        $limit = $u['bandwidth_limit_bytes'] ?? null;
        $fields['bwlimit'] = $limit === null ? 0 : Text::megabytes($limit);
        return $fields;
    }

    // ---- client area ------------------------------------------------------------------------

    /**
     * The service page: status and monitoring, "Not available" wherever pvebill has no figure,
     * and the usage graphs of the period $range (day, week or month; a day for anything else).
     */
    public function clientArea(array $params, string $range = 'day'): array
    {
        $lang = Lang::forClient($params);
        $vars = ['error' => null, 'service' => null, 'monitoring' => [], 'graphs' => '', 'buttons' => [],
            'serviceid' => (int) ($params['serviceid'] ?? 0)];
        try {
            $c = $this->client($params);
            $r = $c->request('GET', self::servicePath($params), null, [], 20);
            if ($r->isProblem()) {
                $vars['error'] = self::problemText($r, $this->lang);
            } else {
                $vars = self::serviceVars($r->json['service'] ?? [], $lang) + $vars;
                $vars['error'] = null;
                $vars['console_link'] = self::consoleLink($params, false);
                $svc = $r->json['service'] ?? [];
                // One plan request a page: its limits draw the graphs, its capabilities pick the buttons.
                $plan = $this->planOf($c, (string) ($svc['plan'] ?? ''));
                $vars['buttons'] = self::buttons(
                    $params,
                    $plan,
                    (string) ($svc['guest_type'] ?? ''),
                    $lang,
                    ($svc['ip_addresses'] ?? []) !== []
                );
                $vars['graphs'] = $this->graphsForPlan($c, $params, $plan ?? [], $range, null, $lang);
            }
        } catch (\Throwable $e) {
            $vars['error'] = $this->unreachable($e);
        }
        // One namespaced variable: the product details page has variables of its own; the texts
        // as WHMCS hands a module's language to its templates.
        return ['tabOverviewReplacementTemplate' => 'templates/clientarea.tpl',
            'templateVariables' => ['pvebill' => $vars, '_lang' => $lang->all()]];
    }

    /** The graphs the client area shows: title, metrics drawn in it (text keys), and the plan field of its limit. */
    private const GRAPHS = [
        ['memory', ['memory' => 'memory'], 'memory_mib'],
        ['swap', ['swap' => 'swap'], 'swap_mib'],
        ['cpu', ['cpu' => 'cpu'], null],
        ['network', ['netin' => 'received', 'netout' => 'sent'], null],
    ];

    /**
     * The usage graphs of one period as HTML: links to the other periods (no JavaScript: a
     * link reloads the page with ?pvebill_range=…) and one inline SVG a graph, drawn from
     * pvebill's usage series; the plan's memory and swap are drawn as limits. $now is the
     * period's end (null: now).
     */
    public function graphsHtml(Client $c, array $params, string $plan, string $range, ?int $now = null): string
    {
        return $this->graphsForPlan(
            $c,
            $params,
            $this->planOf($c, $plan) ?? [],
            $range,
            $now,
            Lang::forClient($params)
        );
    }

    /** The plan $code as pvebill answers it (limits, capabilities), or null when it could not be read. */
    private function planOf(Client $c, string $code): ?array
    {
        if ($code === '') {
            return null;
        }
        $p = $c->request('GET', '/v1/plans/' . rawurlencode($code), null, [], 20);
        return $p->isProblem() || !is_array($p->json['plan'] ?? null) ? null : $p->json['plan'];
    }

    /**
     * The client area's buttons: the text key of the label, the module function the button
     * calls (allowed by pvebill_ClientAreaAllowedFunctions), the capability it needs, and how it
     * is sent: "post" is a form with WHMCS's CSRF token (it changes something: the power actions,
     * and the console, which opens a session), "link" a page that changes nothing until its own
     * form is sent. The power buttons call Power with the action in the form, never a GET link.
     */
    public const BUTTONS = [
        ['start', 'Power', 'start', 'post'],
        ['stop', 'Power', 'stop', 'post'],
        ['shutdown', 'Power', 'shutdown', 'post'],
        ['reboot', 'Power', 'reboot', 'post'],
        ['console', 'Console', 'console', 'post'],
        ['reinstall', 'Reinstall', 'reinstall', 'link'],
        ['snapshots', 'Snapshots', 'snapshot', 'link'],
        ['backups', 'Backups', 'backup', 'link'],
        // Reverse DNS (R55) is no capability of the plan: offered to a service that has an address.
        ['reversedns', 'ReverseDNS', null, 'link'],
    ];

    /** Bootstrap 4 classes of the buttons (WHMCS's "Twenty-One" theme): the ordinary start, the hard stop. */
    private const BUTTON_CLASSES = ['start' => 'btn btn-primary', 'stop' => 'btn btn-danger'];

    /**
     * The client area's buttons for a service of guest type $guestType on $plan: a capability
     * the plan offers is a button, one refused for now a disabled button with pvebill's
     * translated reason, one refused for good (or one the guest type does not have) no button.
     * Without the plan's capabilities (pvebill could not be asked) every button is shown and a
     * refusal comes when it is pressed.
     *
     * @return list<array{label: string, href: string, method: string, power: ?string, class: string,
     *     new_tab: bool, reason: ?string}>
     */
    public static function buttons(
        array $params,
        ?array $plan,
        string $guestType,
        ?Lang $lang = null,
        bool $hasAddresses = true
    ): array {
        $lang ??= Lang::named(Lang::FALLBACK);
        $caps = $plan['capabilities'][$guestType] ?? null;
        $out = [];
        foreach (self::BUTTONS as [$key, $fn, $cap, $method]) {
            $reason = null;
            if ($cap === null && !$hasAddresses) {
                continue;
            }
            if (is_array($caps) && $cap !== null) {
                $c = $caps[$cap] ?? null;
                if (!is_array($c) || (($c['available'] ?? false) !== true && ($c['refusal'] ?? '') !== 'temporary')) {
                    continue;
                }
                if (($c['available'] ?? false) !== true) {
                    $reason = (string) ($c['reason'] ?? '');
                }
            }
            $out[] = [
                'label' => $lang->t($key),
                'href' => self::customLink($params, $fn),
                'method' => $method,
                'power' => $fn === 'Power' ? $cap : null,
                'class' => self::BUTTON_CLASSES[$key] ?? 'btn btn-outline-secondary',
                'new_tab' => $fn === 'Console',
                'reason' => $reason,
            ];
        }
        return $out;
    }

    /** The client area's address of one of the module's functions (its pages and forms). */
    public static function customLink(array $params, string $fn): string
    {
        return self::overviewLink($params) . '&modop=custom&a=' . $fn;
    }

    /** The service's overview page in the client area. */
    public static function overviewLink(array $params): string
    {
        return 'clientarea.php?action=productdetails&id=' . (int) ($params['serviceid'] ?? 0);
    }

    /**
     * The breadcrumb of one of the module's client-area pages: the service's overview, then the
     * page; every link names the service (&id=).
     *
     * @return array<string,string>
     */
    private static function breadcrumb(array $params, Lang $lang, string $fn, string $key): array
    {
        return [self::overviewLink($params) => $lang->t('overview'), self::customLink($params, $fn) => $lang->t($key)];
    }

    /** The usage graphs (graphsHtml) drawn with the limits of $plan, the plan object pvebill answered. */
    private function graphsForPlan(
        Client $c,
        array $params,
        array $limits,
        string $range,
        ?int $now,
        Lang $lang
    ): string {
        $range = isset(Graph::RANGES[$range]) ? $range : 'day';
        $to = $now ?? time();
        $from = $to - Graph::RANGES[$range];
        $e = static fn (string $s): string => htmlspecialchars($s, ENT_QUOTES | ENT_HTML5, 'UTF-8');
        $html = '<div class="pvebill-graphs"><p class="pvebill-ranges">';
        foreach (array_keys(Graph::RANGES) as $name) {
            $label = $lang->t('range_' . $name);
            $html .= $name === $range ? '<strong>' . $e($label) . '</strong> '
                : '<a href="' . $e(self::overviewLink($params) . '&pvebill_range=' . $name) . '">' . $e($label)
                    . '</a> ';
        }
        $html .= '</p>';
        $query = '&from=' . rawurlencode(gmdate('Y-m-d\TH:i:s\Z', $from)) . '&to='
            . rawurlencode(gmdate('Y-m-d\TH:i:s\Z', $to)) . '&points=' . Graph::POINTS;
        foreach (self::GRAPHS as [$titleKey, $metrics, $limitField]) {
            $title = $lang->t($titleKey);
            $lines = [];
            $unit = '';
            foreach ($metrics as $metric => $label) {
                $path = self::servicePath($params, '/usage/series') . '?metric=' . $metric . $query;
                $r = $c->request('GET', $path, null, [], 20);
                if ($r->isProblem()) {
                    $html .= '<p class="pvebill-graph-error">' . $e($title . ': ' . self::problemText($r, $lang))
                        . '</p>';
                    continue 2;
                }
                $series = $r->json['series'] ?? [];
                $unit = (string) ($series['unit'] ?? '');
                $lines[] = ['label' => $lang->t($label), 'points' => Graph::points($series)];
            }
            $mib = $limitField === null ? null : ($limits[$limitField] ?? null);
            $limit = is_int($mib) && $mib > 0 ? (float) $mib * 1048576 : null;
            $svg = Graph::svg(
                $title . ' · ' . $lang->t('range_' . $range),
                $unit,
                $lines,
                $limit,
                $from,
                $to,
                ['limit' => $lang->t('plan_limit', ['limit' => '{limit}']), 'no_data' => $lang->t('no_data')]
            );
            $html .= '<figure class="pvebill-graph">' . $svg . '</figure>';
        }
        return $html . '</div>';
    }

    /**
     * The overview's two tables, each row keyed by its text key (status, cpu, …) with the label
     * and the value in the customer's language; "Not available" where pvebill has no figure.
     *
     * @return array{service: array<string,array{label: string, value: string}>,
     *     monitoring: array<string,array{label: string, value: string}>}
     */
    public static function serviceVars(array $s, ?Lang $lang = null): array
    {
        $l = $lang ?? Lang::named(Lang::FALLBACK);
        $m = $s['monitoring'] ?? [];
        $get = static fn (string $k) => $m[$k] ?? null;
        $ips = $s['ip_addresses'] ?? [];
        $na = $l->t('not_available');
        $state = (string) ($s['state'] ?? '');
        $power = (string) ($s['power'] ?? 'unknown');
        $rows = static function (array $values) use ($l): array {
            $out = [];
            foreach ($values as $key => $value) {
                $out[$key] = ['label' => $l->t($key), 'value' => $value];
            }
            return $out;
        };
        return [
            'service' => $rows([
                'status' => $state === '' ? $na : self::word($l, 'state_' . $state, $state),
                'power' => $power === 'unknown' ? $na : self::word($l, 'power_' . $power, $power),
                'hostname' => (string) ($s['hostname'] ?? ''),
                'guest_type' => $l->t(($s['guest_type'] ?? '') === 'vm' ? 'vm' : 'container'),
                'plan' => (string) ($s['plan'] ?? ''),
                'ip_addresses' => $ips === [] ? $na : implode(', ', $ips),
                'ip_prefix' => (string) ($s['ipv6']['prefix'] ?? $na),
            ]),
            'monitoring' => $rows([
                'cpu' => Text::percent($get('cpu') === null ? null : (float) $get('cpu'), $l),
                'memory' => Text::usedOf($get('memory_bytes'), $get('memory_max_bytes'), $l),
                'disk' => Text::usedOf($get('disk_bytes'), $get('disk_max_bytes'), $l),
                'swap' => Text::usedOf($get('swap_bytes'), $get('swap_max_bytes'), $l),
                'network_in' => Text::bytes($get('netin_bytes'), $l),
                'network_out' => Text::bytes($get('netout_bytes'), $l),
                'uptime' => Text::duration($get('uptime_seconds'), $l),
                'guest_agent' => Text::yesNo($get('guest_agent'), $l),
            ]),
        ];
    }

    /** The text of $key, or $raw when there is none (a value pvebill added since). */
    private static function word(Lang $l, string $key, string $raw): string
    {
        $t = $l->t($key);
        return $t === 'pvebill_' . $key ? $raw : $t;
    }

    // ---- backups (R42) -----------------------------------------------------------------------

    /**
     * The client area's backups page: the service's backups, a "Back up now" button and a
     * delete button per backup. step=create backs up now (an operation, waited for within the
     * budget); step=delete deletes the backup named by backup_id, which pvebill looks up in the
     * service's own list (another service's archive cannot be named).
     */
    public function clientBackups(array $params, array $input): array
    {
        $lang = Lang::forClient($params);
        $vars = ['error' => null, 'message' => null, 'backups' => [], 'restore' => null, 'mounts' => [],
            'snapshots' => [], 'blockers' => []];
        $step = (string) ($input['step'] ?? '');
        if ($step === 'restore') {
            // The confirmation step: what the restore erases, and a form that applies exactly that.
            $vars = $this->restorePreviewVars($params, (string) ($input['backup_id'] ?? ''), $vars, $lang);
        }
        $res = match ($step) {
            'create' => $this->mutate($params, 'backup', self::servicePath($params, '/backups'), []),
            'delete' => $this->deleteBackup($params, (string) ($input['backup_id'] ?? '')),
            'restore_confirm' => ($input['confirm'] ?? '') === '1'
                ? $this->applyRestore($params, (string) ($input['intent_id'] ?? ''))
                : $lang->t('restore_tick'),
            default => null,
        };
        if ($res === 'success') {
            $vars['message'] = $lang->t(self::BACKUP_DONE[$step]);
        } elseif ($res !== null) {
            $vars[$res === $this->pending ? 'message' : 'error'] = $res;
        }
        $list = $this->backupList($params, $lang);
        $vars['backups'] = $list['backups'];
        $vars['error'] ??= $list['error'];
        return self::customPage($params, $lang, 'Backups', 'backups', $vars);
    }

    /**
     * A page of the module in the client area: title and breadcrumb in the customer's language,
     * the template of $fn, the service's id and the texts for the template.
     */
    private static function customPage(array $params, Lang $lang, string $fn, string $key, array $vars): array
    {
        $vars['serviceid'] = (int) ($params['serviceid'] ?? 0);
        $vars['_lang'] = $lang->all();
        $vars += ['refused' => false];
        return ['pagetitle' => $lang->t($key), 'breadcrumb' => self::breadcrumb($params, $lang, $fn, $key),
            'templatefile' => 'templates/' . strtolower($fn), 'requirelogin' => true, 'vars' => $vars];
    }

    /**
     * A client-area page refused before anything was sent: its form did not come as a POST with
     * WHMCS's CSRF token. The page says so in the customer's language and shows nothing else
     * (listing what the page lists would ask pvebill).
     */
    public static function refusedPage(array $params, string $fn): array
    {
        $lang = Lang::forClient($params);
        $key = strtolower($fn);
        $vars = ['error' => $lang->t('token_invalid'), 'message' => null, 'refused' => true];
        if ($fn === 'Console') {
            return self::consolePage($params, $vars['error']);
        }
        return self::customPage($params, $lang, $fn, $key, $vars);
    }

    /** The text keys of a backup step's success. */
    private const BACKUP_DONE = [
        'create' => 'backup_created',
        'delete' => 'backup_deleted',
        'restore_confirm' => 'backup_restored',
    ];

    /** The restore preview of a backup into the page's variables (R43). */
    private function restorePreviewVars(array $params, string $backupId, array $vars, Lang $lang): array
    {
        if ($backupId === '') {
            $vars['error'] = $lang->t('no_backup_chosen');
            return $vars;
        }
        $res = $this->previewIntent($params, 'restore', ['backup_id' => $backupId]);
        if ($res['error'] !== null) {
            $vars['error'] = $res['error'];
            return $vars;
        }
        $intent = $res['intent'];
        $vars['restore'] = ['id' => (string) ($intent['id'] ?? ''), 'state' => (string) ($intent['state'] ?? ''),
            'backup_id' => (string) ($intent['backup_id'] ?? $backupId)];
        $vars['restore']['title'] = $lang->t('restore_title', ['backup' => $vars['restore']['backup_id']]);
        $vars['mounts'] = self::mountRows($intent, $lang);
        $vars['snapshots'] = self::snapshotNames($intent['snapshots'] ?? []);
        foreach ($intent['blockers'] ?? [] as $b) {
            $vars['blockers'][] = (string) ($b['message'] ?? $b['code'] ?? '');
        }
        if (($intent['state'] ?? '') === 'preview_pending') {
            $vars['message'] = $lang->t('restore_pending');
        }
        return $vars;
    }

    /** Restore phase 2: re-reads the intent for its confirmations and applies it. */
    private function applyRestore(array $params, string $intentId): string
    {
        if ($intentId === '') {
            return 'pvebill: ' . Lang::forClient($params)->t('no_restore_preview');
        }
        $base = self::servicePath($params, '/restore');
        try {
            $g = $this->client($params)->request('GET', $base . '/' . rawurlencode($intentId), null, [], 20);
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
        if ($g->isProblem()) {
            return self::problemText($g, $this->lang);
        }
        $intent = $g->json['intent'] ?? [];
        $state = (string) ($intent['state'] ?? '');
        if ($state === 'applying') {
            return $this->inProgress('restore', null, 'applying');
        }
        if ($state === 'completed') {
            return 'success';
        }
        if ($state !== 'preview_ready') {
            return 'pvebill: ' . $this->lang->t('restore_not_applicable', ['state' => $state]);
        }
        $body = ['intent_id' => $intentId, 'confirmations' => $intent['confirmations'] ?? []];
        return $this->mutate($params, 'restore', $base, $body);
    }

    /** @return array{backups: list<array<string,string|bool>>, error: ?string} the list, oldest first */
    public function backupList(array $params, ?Lang $lang = null): array
    {
        try {
            $r = $this->client($params)->request('GET', self::servicePath($params, '/backups'), null, [], 30);
        } catch (\Throwable $e) {
            return ['backups' => [], 'error' => $this->unreachable($e)];
        }
        if ($r->isProblem()) {
            return ['backups' => [], 'error' => self::problemText($r, $this->lang)];
        }
        return ['backups' => self::backupRows($r->json['backups'] ?? [], $lang), 'error' => null];
    }

    /**
     * Deletes one of the service's backups: "success", or pvebill's translated refusal. pvebill
     * answers 204 once the archive is gone, or 202 with a backup_delete operation, which is
     * followed like every other within the budget (docs/api.md, Backups).
     */
    public function deleteBackup(array $params, string $backupId): string
    {
        if ($backupId === '') {
            return 'pvebill: ' . Lang::forClient($params)->t('no_backup_chosen');
        }
        $path = self::servicePath($params, '/backups/' . rawurlencode($backupId));
        $sid = self::serviceId($params);
        $deadline = microtime(true) + $this->waitBudget();
        try {
            $c = $this->client($params);
            $r = $c->request('DELETE', $path, null, [], 60);
            self::log('backup_delete', ['service_id' => $sid, 'backup_id' => $backupId], $r->body);
            if ($r->isProblem()) {
                return self::problemText($r, $this->lang);
            }
            $op = $r->json['operation'] ?? null;
            if ($r->status === 204 || !is_array($op)) {
                return 'success';
            }
            return $this->outcome($sid, 'backup_delete', $this->follow($c, $op, $deadline));
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
    }

    /** @return list<array<string,string|bool>> one row per backup, for people */
    public static function backupRows(array $list, ?Lang $lang = null): array
    {
        $rows = [];
        foreach ($list as $b) {
            $rows[] = [
                'id' => (string) ($b['id'] ?? ''),
                'created' => Text::time((string) ($b['created_at'] ?? ''), $lang),
                'size' => Text::bytes($b['size_bytes'] ?? null, $lang),
                'protected' => (bool) ($b['protected'] ?? false),
            ];
        }
        return $rows;
    }

    // ---- console (R41) -----------------------------------------------------------------------

    /**
     * A one-time console URL of the service (a container's terminal, a VM's screen), asked for
     * when the customer or the admin presses "Open console": it must be opened within 60 s and
     * works once, so it is fetched in the new tab itself and never shown or stored. A refusal
     * (a suspended service, a stopped guest, the console not configured) is pvebill's
     * translated text. The answer is never replayed: no Idempotency-Key.
     *
     * @return array{url: ?string, error: ?string}
     */
    public function openConsole(array $params, ?Lang $lang = null): array
    {
        try {
            $r = $this->client($params, $lang)->request('POST', self::servicePath($params, '/console'), [], [], 20);
        } catch (\Throwable $e) {
            return ['url' => null, 'error' => $this->unreachable($e)];
        }
        self::log('console', ['service_id' => self::serviceId($params)], ['status' => $r->status]);
        if ($r->isProblem()) {
            return ['url' => null, 'error' => self::problemText($r, $this->lang)];
        }
        $url = (string) ($r->json['console']['url'] ?? '');
        if (!preg_match('#^https?://#', $url)) {
            return ['url' => null, 'error' => 'pvebill: the console answer carried no URL (HTTP ' . $r->status . ')'];
        }
        return ['url' => $url, 'error' => null];
    }

    /**
     * The "Open console" button's page when there is no console to open: the refusal, in the
     * client area's page frame. @return array<string,mixed>
     */
    public static function consolePage(array $params, string $error): array
    {
        $lang = Lang::forClient($params);
        return ['pagetitle' => $lang->t('console'), 'templatefile' => 'templates/console',
            'breadcrumb' => self::breadcrumb($params, $lang, 'Console', 'console'),
            'vars' => ['pvebill' => ['error' => $error], '_lang' => $lang->all(),
                'serviceid' => (int) ($params['serviceid'] ?? 0)]];
    }

    // ---- reinstall (two phases) -------------------------------------------------------------

    /** Admin button: ask for a preview; its mounts show on the service's admin tab. */
    public function adminReinstallPreview(array $params): string
    {
        $res = $this->preview($params, self::osOf($params));
        if ($res['error'] !== null) {
            return $res['error'];
        }
        if ($res['intent']['state'] === 'preview_pending') {
            return $this->inProgress('reinstall preview', null, 'preview_pending');
        }
        return 'success';
    }

    /** Admin button: apply the latest ready preview with the service's password. */
    public function adminReinstallApply(array $params): string
    {
        try {
            $r = $this->client($params)->request('GET', self::servicePath($params, '/reinstall'), null, [], 20);
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
        if ($r->isProblem()) {
            return $r->status === 404
                ? 'pvebill: ' . Lang::forAdmin()->t('admin_no_preview_press')
                : self::problemText($r, $this->lang);
        }
        $intent = $r->json['intent'] ?? [];
        return $this->apply($params, (string) ($intent['id'] ?? ''), (string) ($params['password'] ?? ''));
    }

    /** Admin service tab: the latest reinstall intent with every mount's fate. @return array<string,string> */
    public function adminServicesTabFields(array $params): array
    {
        $lang = Lang::forAdmin();
        $tab = $lang->t('admin_tab_reinstall');
        try {
            $r = $this->client($params, $lang)->request('GET', self::servicePath($params, '/reinstall'), null, [], 20);
        } catch (\Throwable $e) {
            return [$tab => htmlspecialchars($this->unreachable($e))];
        }
        $console = [$lang->t('admin_tab_console') => '<a href="' . htmlspecialchars(self::consoleLink($params, true))
            . '" target="_blank" rel="noopener">' . htmlspecialchars($lang->t('console')) . '</a>']
            + $this->adminReverseDnsFields($params, $lang);
        if ($r->status === 404) {
            return $console + [$tab => htmlspecialchars($lang->t('admin_no_preview'))];
        }
        if ($r->isProblem()) {
            return $console + [$tab => htmlspecialchars(self::problemText($r, $this->lang))];
        }
        return $console + [$tab => self::intentHtml($r->json['intent'] ?? [], $lang)];
    }

    /**
     * The page that opens the service's console in a new tab: the client area's Console button,
     * or the admin's AdminConsole (with WHMCS's link token when there is one).
     */
    public static function consoleLink(array $params, bool $admin): string
    {
        $id = (int) ($params['serviceid'] ?? 0);
        if (!$admin) {
            return 'clientarea.php?action=productdetails&id=' . $id . '&modop=custom&a=Console';
        }
        $link = 'clientsservices.php?userid=' . (int) ($params['userid'] ?? 0) . '&id=' . $id
            . '&modop=custom&ac=AdminConsole&pvebill_console=1';
        return function_exists('generate_token') ? $link . generate_token('link') : $link;
    }

    /**
     * The client area's reinstall page. Without input it previews (with the chosen OS) and shows
     * every mount's data label and fate and a confirmation form; with step=confirm, a ticked
     * confirmation and a root password it applies exactly that preview.
     */
    public function clientReinstall(array $params, array $input): array
    {
        $lang = Lang::forClient($params);
        $page = static fn (array $vars): array => self::customPage($params, $lang, 'Reinstall', 'reinstall', $vars);
        $vars = ['error' => null, 'message' => null, 'intent' => null, 'mounts' => [], 'snapshots' => [],
            'blockers' => [], 'done' => false];
        if ((string) ($input['step'] ?? '') === 'confirm') {
            return $page($this->confirmReinstall($params, $input, $vars, $lang));
        }
        $waiting = $this->awaitingPassword($params);
        if ($waiting !== null) {
            // A reinstall taken over after its destroy waits for the root password, which
            // pvebill never stores (R26, R58): ask the customer for it, not for a new preview.
            $vars = self::withIntent($vars, $waiting, (string) ($waiting['os'] ?? self::osOf($params)), $lang);
            $vars['message'] = $lang->t('reinstall_awaiting_password');
            return $page($vars);
        }
        $os = trim((string) ($input['os'] ?? '')) ?: self::osOf($params);
        $res = $this->preview($params, $os);
        if ($res['error'] !== null) {
            $vars['error'] = $res['error'];
            return $page($vars);
        }
        return $page(self::withIntent($vars, $res['intent'], $os, $lang));
    }

    /** The service's latest reinstall intent when it waits for the root password, else null. */
    private function awaitingPassword(array $params): ?array
    {
        try {
            $r = $this->client($params)->request('GET', self::servicePath($params, '/reinstall'), null, [], 20);
        } catch (\Throwable $e) {
            return null;
        }
        $intent = $r->isProblem() ? null : ($r->json['intent'] ?? null);
        return is_array($intent) && ($intent['state'] ?? '') === 'awaiting_password' ? $intent : null;
    }

    /** Reinstall phase 2 from the page's form: checks the confirmation and the password, then applies. */
    private function confirmReinstall(array $params, array $input, array $vars, Lang $lang): array
    {
        $password = (string) ($input['root_password'] ?? '');
        $intentId = (string) ($input['intent_id'] ?? '');
        $invalid = match (true) {
            ($input['confirm'] ?? '') !== '1' => $lang->t('reinstall_tick'),
            strlen($password) < 8 => $lang->t('password_short'),
            default => null,
        };
        if ($invalid !== null) {
            // Show the same preview again: a new one would replace what the customer read.
            $vars['error'] = $invalid;
            return $this->intentVars($params, $intentId, $vars, $lang);
        }
        $res = $this->apply($params, $intentId, $password);
        if ($res === 'success') {
            $vars['done'] = true;
            $vars['message'] = $lang->t('reinstall_done');
            self::storePassword($params, $password);
        } else {
            $vars[$res === $this->pending ? 'message' : 'error'] = $res;
        }
        return $vars;
    }

    /** The page's variables for an intent read by id (an error when it cannot be read). */
    private function intentVars(array $params, string $intentId, array $vars, Lang $lang): array
    {
        try {
            $path = self::servicePath($params, '/reinstall/' . rawurlencode($intentId));
            $g = $this->client($params)->request('GET', $path, null, [], 20);
        } catch (\Throwable $e) {
            $vars['error'] .= ' ' . $this->unreachable($e);
            return $vars;
        }
        if ($g->isProblem()) {
            $vars['error'] .= ' ' . self::problemText($g, $this->lang);
            return $vars;
        }
        $os = (string) ($g->json['intent']['os'] ?? self::osOf($params));
        return self::withIntent($vars, $g->json['intent'] ?? [], $os, $lang);
    }

    private static function withIntent(array $vars, array $intent, string $os, Lang $lang): array
    {
        $na = $lang->t('not_available');
        $vars['intent'] = ['id' => $intent['id'] ?? '', 'state' => $intent['state'] ?? '', 'os' => $os,
            'rootfs_current' => $intent['rootfs']['current_display'] ?? $na,
            'rootfs_planned' => $intent['rootfs']['planned_display'] ?? $na];
        $vars['mounts'] = self::mountRows($intent, $lang);
        $vars['snapshots'] = self::snapshotNames($intent['snapshots'] ?? []);
        foreach ($intent['blockers'] ?? [] as $b) {
            $vars['blockers'][] = (string) ($b['message'] ?? $b['code'] ?? '');
        }
        if (($intent['state'] ?? '') === 'preview_pending') {
            $vars['message'] = $lang->t('reinstall_pending');
        }
        return $vars;
    }

    /** @return list<array<string,string>> one row per mount, labels spelled out */
    public static function mountRows(array $intent, ?Lang $lang = null): array
    {
        $lang ??= Lang::named(Lang::FALLBACK);
        $rows = [];
        foreach ($intent['mounts'] ?? [] as $mt) {
            $data = (string) ($mt['data'] ?? '');
            $after = (string) ($mt['mount_after'] ?? '');
            $rows[] = [
                'key' => (string) ($mt['key'] ?? ''),
                'path' => (string) ($mt['path'] ?? ''),
                'volume' => (string) ($mt['volume'] ?? ''),
                'data' => $data,
                'data_label' => isset(Text::DATA_KEYS[$data]) ? $lang->t(Text::DATA_KEYS[$data]) : $data,
                'mount_after' => $after,
                'mount_after_label' => isset(Text::MOUNT_KEYS[$after]) ? $lang->t(Text::MOUNT_KEYS[$after]) : $after,
            ];
        }
        return $rows;
    }

    private static function intentHtml(array $intent, Lang $lang): string
    {
        $h = static fn ($s) => htmlspecialchars((string) $s, ENT_QUOTES);
        $out = $h($lang->t('admin_state')) . ': <strong>' . $h($intent['state'] ?? '') . '</strong> (intent '
            . $h($intent['id'] ?? '') . ')';
        $out .= '<table class="table table-sm"><tr>';
        foreach (['mount', 'path', 'volume', 'data', 'afterwards'] as $k) {
            $out .= '<th>' . $h($lang->t($k)) . '</th>';
        }
        $out .= '</tr>';
        foreach (self::mountRows($intent, $lang) as $r) {
            $out .= '<tr><td>' . $h($r['key']) . '</td><td>' . $h($r['path']) . '</td><td>' . $h($r['volume'])
                . '</td><td>' . $h($r['data_label']) . '</td><td>' . $h($r['mount_after_label']) . '</td></tr>';
        }
        $out .= '</table>';
        foreach ($intent['blockers'] ?? [] as $b) {
            $out .= '<div class="alert alert-warning">' . $h($b['message'] ?? $b['code'] ?? '') . '</div>';
        }
        return $out;
    }

    /** @return array{intent: ?array, error: ?string} */
    private function preview(array $params, string $os): array
    {
        return $this->previewIntent($params, 'reinstall', $os === '' ? [] : ['os' => $os]);
    }

    /**
     * Phase 1 of a reinstall or a restore ($route), waited for within the module's budget.
     *
     * @return array{intent: ?array, error: ?string}
     */
    private function previewIntent(array $params, string $route, array $body): array
    {
        $sid = self::serviceId($params);
        $base = '/v1/services/' . rawurlencode($sid) . '/' . $route;
        $action = $route . '_preview';
        $deadline = microtime(true) + $this->waitBudget();
        try {
            $c = $this->client($params);
            $r = $this->post($c, $sid, $action, $base . '/preview', $body, $deadline);
            if ($r->isProblem() && ($r->json['code'] ?? '') !== ErrorCode::IDEMPOTENCY_KEY_IN_PROGRESS) {
                $this->attempts->close($sid, $action);
            }
            if ($r->isProblem()) {
                return ['intent' => null, 'error' => self::problemText($r, $this->lang)];
            }
            // A preview is read-only: the next one is a new request, never a replay of this one.
            $this->attempts->close($sid, $action);
            $intent = $r->json['intent'] ?? [];
            while (($intent['state'] ?? '') === 'preview_pending' && microtime(true) < $deadline) {
                usleep(500000);
                $g = $c->request('GET', $base . '/' . rawurlencode((string) $intent['id']), null, [], 20);
                if ($g->isProblem()) {
                    return ['intent' => null, 'error' => self::problemText($g, $this->lang)];
                }
                $intent = $g->json['intent'] ?? $intent;
            }
            return ['intent' => $intent, 'error' => null];
        } catch (\Throwable $e) {
            return ['intent' => null, 'error' => $this->unreachable($e)];
        }
    }

    /** Phase 2: re-reads the intent for its confirmations and applies it. */
    private function apply(array $params, string $intentId, string $password): string
    {
        if ($intentId === '') {
            return 'pvebill: ' . Lang::forClient($params)->t('no_reinstall_preview');
        }
        $sid = self::serviceId($params);
        $base = '/v1/services/' . rawurlencode($sid) . '/reinstall';
        try {
            $c = $this->client($params);
            $g = $c->request('GET', $base . '/' . rawurlencode($intentId), null, [], 20);
            if ($g->isProblem()) {
                return self::problemText($g, $this->lang);
            }
            $intent = $g->json['intent'] ?? [];
            $state = (string) ($intent['state'] ?? '');
            if ($state === 'applying') {
                return $this->inProgress('reinstall', null, 'applying');
            }
            if ($state === 'completed') {
                return 'success';
            }
            // awaiting_password: the same apply again, now with the password (R58).
            if ($state !== 'preview_ready' && $state !== 'awaiting_password') {
                return 'pvebill: ' . $this->lang->t('reinstall_not_applicable', ['state' => $state]);
            }
            $body = ['intent_id' => $intentId, 'confirmations' => $intent['confirmations'] ?? [],
                'root_password' => $password];
            $keys = self::sshKeys($params);
            if ($keys !== []) {
                $body['ssh_keys'] = $keys;
            }
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
        return $this->mutate($params, 'reinstall', $base, $body);
    }

    // ---- snapshots (R44) ---------------------------------------------------------------------

    /**
     * The client area's snapshot page: the guest's snapshots (oldest first) and the plan's limit,
     * a form to take one, a delete button per snapshot and a rollback that asks for the
     * snapshot's name again. With step=create, delete or rollback it does that first and lists
     * afterwards; a rollback whose typed name differs is refused here and sends nothing.
     *
     * @param array<string,string> $input step, name, description, confirm
     */
    public function clientSnapshots(array $params, array $input): array
    {
        $lang = Lang::forClient($params);
        $vars = ['error' => null, 'message' => null, 'snapshots' => [], 'max' => 0];
        $step = (string) ($input['step'] ?? '');
        $name = trim((string) ($input['name'] ?? ''));
        $res = null;
        if ($step === 'rollback' && ($input['confirm'] ?? '') !== $name) {
            $vars['error'] = $lang->t('rollback_mistyped');
        } elseif (in_array($step, ['create', 'delete', 'rollback'], true)) {
            $res = $this->snapshotAction($params, $step, $name, trim((string) ($input['description'] ?? '')));
        }
        if ($res === 'success') {
            $vars['message'] = $lang->t(self::SNAPSHOT_DONE[$step]);
        } elseif ($res !== null) {
            $vars[$res === $this->pending ? 'message' : 'error'] = $res;
        }
        $vars = $this->snapshotList($params, $vars, $lang);
        $vars['used'] = $lang->t('snapshots_used', ['count' => count($vars['snapshots']), 'max' => $vars['max']]);
        return self::customPage($params, $lang, 'Snapshots', 'snapshots', $vars);
    }

    /** The text keys of a snapshot step's success. */
    private const SNAPSHOT_DONE = [
        'create' => 'snapshot_taken',
        'delete' => 'snapshot_deleted',
        'rollback' => 'snapshot_rolled_back',
    ];

    /** Takes, deletes or rolls back to a snapshot: "success", or pvebill's refusal. */
    public function snapshotAction(array $params, string $step, string $name, string $description = ''): string
    {
        $base = self::servicePath($params, '/snapshots');
        $one = $base . '/' . rawurlencode($name);
        return match ($step) {
            'create' => $this->mutate($params, 'snapshot_create', $base,
                ['name' => $name] + ($description !== '' ? ['description' => $description] : [])),
            'delete' => $this->mutate($params, 'snapshot_delete', $one, [], 'DELETE'),
            'rollback' => $this->mutate($params, 'snapshot_rollback', $one . '/rollback', ['confirm' => $name]),
            default => 'pvebill: unknown snapshot action ' . $step,
        };
    }

    /** The list and the limit into the page's variables (an error when they cannot be read). */
    private function snapshotList(array $params, array $vars, Lang $lang): array
    {
        try {
            $r = $this->client($params)->request('GET', self::servicePath($params, '/snapshots'), null, [], 20);
        } catch (\Throwable $e) {
            $vars['error'] = trim(($vars['error'] ?? '') . ' ' . $this->unreachable($e));
            return $vars;
        }
        if ($r->isProblem()) {
            $vars['error'] = trim(($vars['error'] ?? '') . ' ' . self::problemText($r, $this->lang));
            return $vars;
        }
        $vars['max'] = (int) ($r->json['snapshots_max'] ?? 0);
        foreach ($r->json['snapshots'] ?? [] as $sn) {
            $vars['snapshots'][] = ['name' => (string) ($sn['name'] ?? ''),
                'description' => (string) ($sn['description'] ?? ''),
                'created_at' => (string) ($sn['created_at'] ?? ''),
                'taken' => Text::time((string) ($sn['created_at'] ?? ''), $lang)];
        }
        return $vars;
    }

    /** @return list<string> the names of the snapshots a reinstall erases */
    public static function snapshotNames(array $snapshots): array
    {
        return array_values(array_map(static fn (array $sn): string => (string) ($sn['name'] ?? ''), $snapshots));
    }

    // ---- the shared request path ------------------------------------------------------------

    /**
     * POSTs a mutation with the attempt's Idempotency-Key, waits for its operation within the
     * budget and maps the outcome. The attempt stays open while the outcome is unknown (no
     * answer, still running, or the same key still in flight) so that a retry sends the same key
     * and picks up the same operation; any definite answer closes it.
     */
    private function mutate(array $params, string $action, string $path, array $body, string $method = 'POST'): string
    {
        $sid = self::serviceId($params);
        $deadline = microtime(true) + $this->waitBudget();
        try {
            $c = $this->client($params);
            $r = $this->post($c, $sid, $action, $path, $body, $deadline, $method);
        } catch (\Throwable $e) {
            self::log($action, ['service_id' => $sid], $e->getMessage(), self::secretsOf($body));
            return $this->unreachable($e);
        }
        self::log($action, ['service_id' => $sid, 'path' => $path], $r->body, self::secretsOf($body));
        if ($r->isProblem()) {
            $code = (string) ($r->json['code'] ?? '');
            if ($code === ErrorCode::IDEMPOTENCY_KEY_IN_PROGRESS) {
                return $this->inProgress(self::words($action), null, null);
            }
            if ($r->status < 500) {
                $this->attempts->close($sid, $action);
            }
            return self::problemText($r, $this->lang);
        }
        $op = $r->json['operation'] ?? null;
        if ($op === null) {
            // The reinstall route may answer with the intent itself.
            return $this->intentOutcome($sid, $action, $r->json['intent'] ?? []);
        }
        try {
            $op = $this->follow($c, $op, $deadline);
        } catch (\Throwable $e) {
            return $this->unreachable($e);
        }
        return $this->outcome($sid, $action, $op);
    }

    /** Sends the POST (or DELETE) with ?wait= for the time left and the attempt's Idempotency-Key. */
    private function post(
        Client $c,
        string $sid,
        string $action,
        string $path,
        array $body,
        float $deadline,
        string $method = 'POST'
    ): Response {
        $raw = Client::encode($body);
        $key = self::idempotencyKey($sid, $action, $this->attempts->open($sid, $action), $raw, $c->secret());
        $wait = self::secondsLeft($deadline);
        $url = $wait > 0 ? $path . (str_contains($path, '?') ? '&' : '?') . 'wait=' . $wait : $path;
        if ($method === 'DELETE') {
            return $c->request('DELETE', $url, null, [], $wait + 15);
        }
        return $c->request('POST', $url, $body, ['Idempotency-Key' => $key], $wait + 15);
    }

    /**
     * The Idempotency-Key of an attempt: service, action, the stable attempt key and a digest of
     * the body (a changed request is a new request, never a reuse of the old key). The digest is
     * keyed with the client's secret: the body may hold a root password, and pvebill stores keys.
     */
    public static function idempotencyKey(
        string $serviceId,
        string $action,
        string $attempt,
        string $rawBody,
        string $secret
    ): string {
        $digest = substr(hash_hmac('sha256', $rawBody, $secret), 0, 16);
        return 'whmcs:' . $serviceId . ':' . $action . ':' . $attempt . ':' . $digest;
    }

    /** Whole seconds until the deadline, for ?wait= (0 to 60). */
    private static function secondsLeft(float $deadline): int
    {
        return max(0, min(self::MAX_WAIT, (int) round($deadline - microtime(true))));
    }

    /** Long-polls the operation until it ends or the deadline passes (a replayed 202 lands here). */
    private function follow(Client $c, array $op, float $deadline): array
    {
        while (!in_array($op['state'] ?? '', self::TERMINAL, true)) {
            $left = self::secondsLeft($deadline);
            if ($left < 1) {
                break;
            }
            $path = '/v1/operations/' . rawurlencode((string) $op['id']) . '?wait=' . $left;
            $r = $c->request('GET', $path, null, [], $left + 15);
            if ($r->isProblem()) {
                break;
            }
            $op = $r->json['operation'] ?? $op;
        }
        return $op;
    }

    private function outcome(string $sid, string $action, array $op): string
    {
        $state = (string) ($op['state'] ?? '');
        if (!in_array($state, self::TERMINAL, true)) {
            return $this->inProgress(self::words($action), (string) ($op['id'] ?? ''), (string) ($op['stage'] ?? ''));
        }
        $this->attempts->close($sid, $action);
        if ($state === 'succeeded') {
            return 'success';
        }
        $err = $op['error'] ?? [];
        $detail = trim((string) ($err['detail'] ?? '')) ?: 'no detail given';
        $code = (string) ($err['code'] ?? '');
        $key = $state === 'needs_reconciliation' ? 'op_reconcile' : 'op_failed';
        $what = $this->lang->t($key, ['what' => self::words($action)]);
        return 'pvebill: ' . $what . ' ' . $detail . ($code !== '' ? ' [' . $code . ']' : '')
            . ' (' . $this->lang->t('operation') . ' ' . ($op['id'] ?? '') . ')';
    }

    private function intentOutcome(string $sid, string $action, array $intent): string
    {
        $state = (string) ($intent['state'] ?? '');
        switch ($state) {
            case 'completed':
                $this->attempts->close($sid, $action);
                return 'success';
            case 'failed':
            case 'needs_reconciliation':
                $this->attempts->close($sid, $action);
                $ended = ['state' => $state, 'id' => $intent['id'] ?? ''];
                return 'pvebill: ' . $this->lang->t('reinstall_ended', $ended);
            default:
                return $this->inProgress('reinstall', null, $state);
        }
    }

    /** Seconds a call may wait: the cap, and never past PHP's time limit less the margin. */
    public function waitBudget(): int
    {
        $budget = min($this->waitCap, self::MAX_WAIT);
        $limit = (int) ini_get('max_execution_time');
        if ($limit > 0) {
            $started = (int) ($_SERVER['REQUEST_TIME'] ?? time());
            $budget = min($budget, $limit - (time() - $started) - $this->margin);
        }
        return max(0, $budget);
    }

    // ---- helpers ----------------------------------------------------------------------------

    /** The signed client, asking for pvebill's texts in $lang (the client's language by default). */
    private function client(array $params, ?Lang $lang = null): Client
    {
        $this->lang = $lang ?? Lang::forClient($params);
        return Client::fromParams($params, $this->lang->code(), $this->transport);
    }

    /** pvebill's service id of a WHMCS service: "<API client id>-<WHMCS service id>". */
    public static function serviceId(array $params): string
    {
        return trim((string) ($params['serverusername'] ?? '')) . '-' . (int) ($params['serviceid'] ?? 0);
    }

    /** The API path of the service, with a suffix such as "/suspend". */
    private static function servicePath(array $params, string $suffix = ''): string
    {
        return '/v1/services/' . rawurlencode(self::serviceId($params)) . $suffix;
    }

    /** @return array<string,mixed> the create request (docs/api.md, Create) */
    public function createBody(array $params): array
    {
        $plan = trim((string) ($params['configoption1'] ?? ''));
        if ($plan === '') {
            throw new \InvalidArgumentException('the product has no plan code (Module Settings, "Plan")');
        }
        $body = ['service_id' => self::serviceId($params), 'plan' => $plan];
        $type = self::guestType($params);
        if ($type !== null) {
            $body['guest_type'] = $type;
        }
        $body['hostname'] = self::hostname($params);
        $body['os'] = self::osOf($params);
        if ($body['os'] === '') {
            throw new \InvalidArgumentException('no operating system: set a default in the Module Settings or a '
                . 'configurable option "' . self::OPTION_OS . '"');
        }
        $password = (string) ($params['password'] ?? '');
        if ($password !== '') {
            $body['root_password'] = $password;
        }
        $keys = self::sshKeys($params);
        if ($keys !== []) {
            $body['ssh_keys'] = $keys;
        }
        return $body;
    }

    private static function guestType(array $params): ?string
    {
        $mode = trim((string) ($params['configoption2'] ?? self::GUEST_TYPE_PLAN));
        if ($mode === self::GUEST_TYPE_CONTAINER || $mode === self::GUEST_TYPE_VM) {
            return $mode;
        }
        if ($mode !== self::GUEST_TYPE_OPTION) {
            return null;
        }
        $v = strtolower(trim((string) ($params['configoptions'][self::OPTION_GUEST_TYPE] ?? '')));
        return match (true) {
            $v === '' => null,
            str_starts_with($v, 'vm'), str_starts_with($v, 'virtual'), str_starts_with($v, 'kvm'),
                str_starts_with($v, 'qemu') => self::GUEST_TYPE_VM,
            str_starts_with($v, 'container'), str_starts_with($v, 'ct'),
                str_starts_with($v, 'lxc') => self::GUEST_TYPE_CONTAINER,
            default => $v,
        };
    }

    private static function osOf(array $params): string
    {
        $opt = trim((string) ($params['configoptions'][self::OPTION_OS] ?? ''));
        return $opt !== '' ? $opt : trim((string) ($params['configoption3'] ?? ''));
    }

    private static function hostname(array $params): string
    {
        $h = strtolower(trim((string) ($params['domain'] ?? '')));
        $label = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
        if ($h !== '' && preg_match('/^' . $label . '(\.' . $label . ')*$/', $h)) {
            return $h;
        }
        return 'vps' . (int) ($params['serviceid'] ?? 0);
    }

    /** @return list<string> */
    private static function sshKeys(array $params): array
    {
        $raw = (string) ($params['customfields'][self::FIELD_SSH_KEY] ?? '');
        $out = [];
        foreach (preg_split('/\r?\n/', $raw) ?: [] as $line) {
            $line = trim($line);
            if ($line !== '') {
                $out[] = $line;
            }
        }
        return $out;
    }

    private static function words(string $action): string
    {
        return str_replace('_', ' ', $action);
    }

    /** A refusal as text: pvebill's translated detail, field and blocker messages, the code. */
    public static function problemText(Response $r, ?Lang $lang = null): string
    {
        $lang ??= Lang::named(Lang::FALLBACK);
        $j = $r->json ?? [];
        $parts = [trim((string) ($j['detail'] ?? '')) ?: $lang->t('http_status', ['status' => $r->status])];
        // A refused capability says why (capability_refused's translated reason).
        $reason = trim((string) ($j['reason'] ?? ''));
        if ($reason !== '' && !str_contains($parts[0], $reason)) {
            $parts[] = $reason;
        }
        foreach ($j['errors'] ?? [] as $e) {
            $parts[] = (string) ($e['message'] ?? (($e['field'] ?? '') . ': ' . ($e['code'] ?? '')));
        }
        foreach ($j['blockers'] ?? [] as $b) {
            $parts[] = (string) ($b['message'] ?? $b['code'] ?? '');
        }
        $text = 'pvebill: ' . implode(' ', $parts);
        if (($j['code'] ?? '') !== '') {
            $text .= ' [' . $j['code'] . ']';
        }
        if (($j['permanence'] ?? '') === 'temporary' || $r->status >= 500) {
            $text .= ' ' . $lang->t('temporary');
        }
        return $text;
    }

    /** "In progress" in the call's language: the action, its operation and stage when known. */
    private function inProgress(string $what, ?string $opId, ?string $stage): string
    {
        $l = $this->lang;
        $ref = $opId !== null && $opId !== ''
            ? ' (' . $l->t('operation') . ' ' . $opId . ($stage ? ', ' . $l->t('stage') . ' ' . $stage : '') . ')'
            : ($stage ? ' (' . $stage . ')' : '');
        return $this->pending = $l->t('in_progress', ['what' => $what, 'ref' => $ref]);
    }

    private function unreachable(\Throwable $e): string
    {
        if ($e instanceof \InvalidArgumentException) {
            return $e->getMessage();
        }
        if (!$e instanceof TransportError) {
            return 'pvebill module error: ' . $e->getMessage();
        }
        return $this->lang->t('unreachable', ['error' => $e->getMessage()]);
    }

    private static function storePassword(array $params, string $password): void
    {
        if (function_exists('localAPI')) {
            localAPI('UpdateClientProduct', ['serviceid' => (int) ($params['serviceid'] ?? 0),
                'servicepassword' => $password]);
        }
    }

    /**
     * Hands a call to WHMCS's module log. $secrets are WHMCS's replace-vars: WHMCS masks each of
     * them wherever it appears in what it logs (the request is logged without a body anyway).
     *
     * @param list<string> $secrets
     */
    private static function log(string $action, array $request, mixed $response, array $secrets = []): void
    {
        if (function_exists('logModuleCall')) {
            logModuleCall('pvebill', $action, $request, $response, null, $secrets);
        }
    }

    /** @return list<string> the passwords of a request body, for WHMCS's log masking */
    private static function secretsOf(array $body): array
    {
        $out = [];
        foreach (['root_password'] as $k) {
            if (is_string($body[$k] ?? null) && $body[$k] !== '') {
                $out[] = $body[$k];
            }
        }
        return $out;
    }
}
