<?php

// WHMCS 7.9+ usage billing: the module's MetricProvider. Every figure is read from pvebill's
// GET /v1/usage for the current calendar month and handed on unchanged but for the unit (R59):
// no second computation. The WHMCS classes it uses exist only inside WHMCS, so this file is
// loaded only when WHMCS asks for the provider.

declare(strict_types=1);

namespace Pvebill;

use WHMCS\UsageBilling\Contracts\Metrics\MetricInterface;
use WHMCS\UsageBilling\Contracts\Metrics\ProviderInterface;
use WHMCS\UsageBilling\Metrics\Metric;
use WHMCS\UsageBilling\Metrics\Units\GigaBytes;
use WHMCS\UsageBilling\Metrics\Units\MegaBytes;
use WHMCS\UsageBilling\Metrics\Usage;

final class MetricProvider implements ProviderInterface
{
    private const GB = 1073741824;
    private const MB = 1048576;

    /**
     * The metrics: system name => text key of the name, the usage report's field, the unit's
     * size in bytes, and whether it is this month's figure or the current one.
     */
    public const METRICS = [
        'traffic_in' => ['metric_traffic_in', 'netin_bytes', self::GB, MetricInterface::TYPE_PERIOD_MONTH],
        'traffic_out' => ['metric_traffic_out', 'netout_bytes', self::GB, MetricInterface::TYPE_PERIOD_MONTH],
        'backup_storage' => ['metric_backup_storage', 'backup_bytes', self::GB, MetricInterface::TYPE_SNAPSHOT],
        'memory_avg' => ['metric_memory_avg', 'memory_avg_bytes', self::MB, MetricInterface::TYPE_PERIOD_MONTH],
        'swap_avg' => ['metric_swap_avg', 'swap_avg_bytes', self::MB, MetricInterface::TYPE_PERIOD_MONTH],
    ];

    /**
     * @param array    $params WHMCS's server parameters
     * @param int|null $to     the period's end (Unix time, exclusive); null: now
     */
    public function __construct(
        private readonly array $params,
        private readonly string $transport = 'auto',
        private readonly ?int $to = null,
    ) {
    }

    /** The period asked of pvebill: from the month's first second to $to. @return array{string, string} */
    public function period(): array
    {
        $to = $this->to ?? time() + 1;
        return [gmdate('Y-m-01\T00:00:00\Z', $to - 1), gmdate('Y-m-d\TH:i:s\Z', $to)];
    }

    /** @return array<string, MetricInterface> every metric, keyed by system name */
    public function metrics(): array
    {
        $lang = Lang::forAdmin();
        $out = [];
        foreach (self::METRICS as $name => [$key, , $size, $type]) {
            $out[$name] = new Metric($name, $lang->t($key), $type, self::unit($size));
        }
        return $out;
    }

    /** @return array<string, array<string, MetricInterface>> every service's usage, keyed by service id */
    public function usage(): array
    {
        $out = [];
        foreach ($this->report(null) as $u) {
            $out[(string) $u['service_id']] = $this->wrap($u);
        }
        return $out;
    }

    /** @return array<string, MetricInterface> the usage of one service (its pvebill service id) */
    public function tenantUsage($tenant): array
    {
        foreach ($this->report((string) $tenant) as $u) {
            if ((string) $u['service_id'] === (string) $tenant) {
                return $this->wrap($u);
            }
        }
        return [];
    }

    /**
     * The metrics of one service's usage with their figures; a figure pvebill does not know
     * (null) is left out, never reported as 0.
     *
     * @return array<string, MetricInterface>
     */
    private function wrap(array $u): array
    {
        [$from, $to] = $this->period();
        $start = strtotime($from);
        $end = strtotime($to);
        $out = [];
        foreach ($this->metrics() as $name => $metric) {
            [, $field, $size] = self::METRICS[$name];
            if (!isset($u[$field]) || !is_numeric($u[$field])) {
                continue;
            }
            $usage = new Usage((float) ($u[$field] / $size), $end, $start, $end);
            $out[$name] = $metric->withUsage($usage);
        }
        return $out;
    }

    /**
     * The usage report of the period, every page (one service when $serviceId is given).
     *
     * @return list<array<string,mixed>>
     */
    private function report(?string $serviceId): array
    {
        [$from, $to] = $this->period();
        $c = Client::fromParams($this->params, Lang::forAdmin()->code(), $this->transport);
        $base = '/v1/usage?from=' . rawurlencode($from) . '&to=' . rawurlencode($to) . '&limit=200'
            . ($serviceId !== null ? '&service_id=' . rawurlencode($serviceId) : '');
        $out = [];
        $cursor = null;
        do {
            $r = $c->request('GET', $base . ($cursor !== null ? '&cursor=' . rawurlencode($cursor) : ''), null, [], 60);
            if ($serviceId !== null && $r->status === 404) {
                return [];    // not a service of this client: no usage
            }
            if ($r->isProblem()) {
                throw new \RuntimeException(Module::problemText($r, Lang::forAdmin()));
            }
            foreach ($r->json['services'] ?? [] as $u) {
                $out[] = $u;
            }
            $cursor = $r->json['next_cursor'] ?? null;
        } while (is_string($cursor) && $cursor !== '');
        return $out;
    }

    private static function unit(int $size): GigaBytes|MegaBytes
    {
        return $size === self::GB ? new GigaBytes() : new MegaBytes();
    }
}
