<?php

/**
 * pvebill provisioning module for WHMCS.
 *
 * Install by copying the folder modules/servers/pvebill into WHMCS's own modules/servers/.
 * Server (Setup → Servers): hostname of pvebill (or a full https://… URL), Secure and Port as
 * served, Username = pvebill API client id (billing scope), Access Hash = its secret.
 * Product (Module Settings): Plan code, Guest type (fixed or customer's choice) and default OS.
 *
 * Every function returns "success" only when pvebill's operation succeeded; otherwise an error
 * text with pvebill's translated detail, or an "In progress" text when the operation is still
 * running: WHMCS then keeps the action in its Module Queue and a retry picks the same operation
 * up (the request carries the same Idempotency-Key).
 */

declare(strict_types=1);

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

require_once __DIR__ . '/lib/autoload.php';

use Pvebill\Csrf;
use Pvebill\Lang;
use Pvebill\MetricProvider;
use Pvebill\Module;

function pvebill_MetaData(): array
{
    return Module::metaData();
}

function pvebill_ConfigOptions(): array
{
    return Module::configOptions();
}

/** Loader of the "Plan" product setting: the plans pvebill offers. */
function pvebill_PlanLoader(array $params): array
{
    return Module::instance()->planLoader($params);
}

function pvebill_CreateAccount(array $params): string
{
    return Module::instance()->createAccount($params);
}

function pvebill_SuspendAccount(array $params): string
{
    return Module::instance()->suspendAccount($params);
}

function pvebill_UnsuspendAccount(array $params): string
{
    return Module::instance()->unsuspendAccount($params);
}

function pvebill_TerminateAccount(array $params): string
{
    return Module::instance()->terminateAccount($params);
}

function pvebill_ChangePackage(array $params): string
{
    return Module::instance()->changePackage($params);
}

/** The new root password of a VM, set through its guest agent; a container's refusal is translated. */
function pvebill_ChangePassword(array $params): string
{
    return Module::instance()->changePassword($params);
}

/** "Log in to control panel" (client area): the console with a fresh one-time URL. */
function pvebill_ServiceSingleSignOn(array $params): array
{
    return Module::instance()->singleSignOn($params, false);
}

/** The admin's single sign-on to the service: the console, as for the client. */
function pvebill_AdminSingleSignOn(array $params): array
{
    return Module::instance()->singleSignOn($params, true);
}

/** Server Sync Tool: every pvebill service of this server's API client. */
function pvebill_ListAccounts(array $params): array
{
    return Module::instance()->listAccounts($params);
}

/** Usage billing (WHMCS 7.9+): this month's figures from pvebill's usage report (R59). */
function pvebill_MetricProvider(array $params): MetricProvider
{
    return new MetricProvider($params);
}

function pvebill_TestConnection(array $params): array
{
    return Module::instance()->testConnection($params);
}

function pvebill_UsageUpdate(array $params): string
{
    return Module::instance()->usageUpdate($params);
}

/** The service page; ?pvebill_range=day|week|month picks the usage graphs' period. */
function pvebill_ClientArea(array $params): array
{
    $range = isset($_GET['pvebill_range']) && is_string($_GET['pvebill_range']) ? $_GET['pvebill_range'] : 'day';
    return Module::instance()->clientArea($params, $range);
}

/** The admin's buttons, labelled in the admin's language (WHMCS protects them with its own token). */
function pvebill_AdminCustomButtonArray(): array
{
    $l = Lang::forAdmin();
    return [
        $l->t('start') => 'Start',
        $l->t('stop') => 'Stop',
        $l->t('shutdown') => 'Shutdown',
        $l->t('reboot') => 'Reboot',
        $l->t('console') => 'AdminConsole',
        $l->t('admin_reinstall_preview') => 'AdminReinstallPreview',
        $l->t('admin_reinstall_apply') => 'AdminReinstallApply',
    ];
}

/**
 * The client area's functions, allowed without a button of WHMCS's own: the overview shows a
 * button only for what the service's plan offers its guest type (Module::buttons). The admin's
 * Start, Stop, Shutdown and Reboot are not among them: the client area's power buttons are
 * forms that post to Power.
 */
function pvebill_ClientAreaAllowedFunctions(): array
{
    $out = [];
    foreach (Module::BUTTONS as [, $fn]) {
        $out[$fn] = $fn;
    }
    return $out;
}

/**
 * The client area's power buttons: a POST with WHMCS's CSRF token and the action in the field
 * "power" (start, stop, shutdown or reboot). "success", or a refusal in the customer's language;
 * a GET, a missing or wrong token or an unknown action sends nothing to pvebill.
 */
function pvebill_Power(array $params): string
{
    $action = $_POST['power'] ?? '';
    if (!Csrf::passed()) {
        return Lang::forClient($params)->t('token_invalid');
    }
    if (!is_string($action) || !in_array($action, Module::POWER_ACTIONS, true)) {
        return 'pvebill: unknown power action';
    }
    return Module::instance()->powerAction($params, $action);
}

/** Power buttons of the admin area: "success", or pvebill's translated refusal. */
function pvebill_Start(array $params): string
{
    return Module::instance()->powerAction($params, 'start');
}

function pvebill_Stop(array $params): string
{
    return Module::instance()->powerAction($params, 'stop');
}

function pvebill_Shutdown(array $params): string
{
    return Module::instance()->powerAction($params, 'shutdown');
}

function pvebill_Reboot(array $params): string
{
    return Module::instance()->powerAction($params, 'reboot');
}

/**
 * "Open console" (client area): the overview's button posts its form (with WHMCS's CSRF token)
 * into a new tab, which asks pvebill for a one-time console URL and goes there at once (the URL
 * works once, within 60 s); a refusal is shown translated instead. Without the token no console
 * session is opened.
 */
function pvebill_Console(array $params): array|string
{
    if (!Csrf::passed()) {
        return Module::refusedPage($params, 'Console');
    }
    $res = Module::instance()->openConsole($params);
    if ($res['url'] !== null && !headers_sent()) {
        header('Cache-Control: no-store');
        header('Location: ' . $res['url'], true, 303);
        exit;
    }
    return Module::consolePage($params, $res['error'] ?? 'pvebill: the console could not be opened');
}

/**
 * "Open console" (admin): the service tab's link opens this in a new tab and goes to the
 * console. Pressed as a module button (no new tab to go to), it asks for no URL and points to
 * the link.
 */
function pvebill_AdminConsole(array $params): string
{
    if (($_GET['pvebill_console'] ?? '') !== '1') {
        return 'pvebill: ' . Lang::forAdmin()->t('admin_console_new_tab');
    }
    $res = Module::instance()->openConsole($params);
    if ($res['url'] === null) {
        return (string) $res['error'];
    }
    if (!headers_sent()) {
        header('Cache-Control: no-store');
        header('Location: ' . $res['url'], true, 303);
        exit;
    }
    return 'pvebill: ' . Lang::forAdmin()->t('admin_console_here');
}

function pvebill_AdminReinstallPreview(array $params): string
{
    return Module::instance()->adminReinstallPreview($params);
}

function pvebill_AdminReinstallApply(array $params): string
{
    return Module::instance()->adminReinstallApply($params);
}

function pvebill_AdminServicesTabFields(array $params): array
{
    return Module::instance()->adminServicesTabFields($params);
}

/**
 * The named fields of the client area's form post that are strings; anything else is left out.
 * A page shown by a GET has none (its query is never read as a form). null: a form was posted
 * without WHMCS's CSRF token, or with a wrong one; the page is refused and nothing is sent.
 *
 * @param list<string> $keys
 * @return array<string, string>|null
 */
function pvebill_post_fields(array $keys): ?array
{
    if (strtoupper((string) ($_SERVER['REQUEST_METHOD'] ?? 'GET')) !== 'POST') {
        return [];
    }
    if (!Csrf::passed()) {
        return null;
    }
    $input = [];
    foreach ($keys as $k) {
        if (isset($_POST[$k]) && is_string($_POST[$k])) {
            $input[$k] = $_POST[$k];
        }
    }
    return $input;
}

/** Client area: the two-phase reinstall page (preview, then confirm with a root password). */
function pvebill_Reinstall(array $params): array
{
    $input = pvebill_post_fields(['step', 'os', 'intent_id', 'root_password', 'confirm']);
    return $input === null ? Module::refusedPage($params, 'Reinstall')
        : Module::instance()->clientReinstall($params, $input);
}

/** Client area: the snapshots page (list, take, delete, roll back with the name as confirmation). */
function pvebill_Snapshots(array $params): array
{
    $input = pvebill_post_fields(['step', 'name', 'description', 'confirm']);
    return $input === null ? Module::refusedPage($params, 'Snapshots')
        : Module::instance()->clientSnapshots($params, $input);
}

/**
 * Client area: the service's backups (list, back up now, delete; R42) and a restore with its
 * confirmation step (R43).
 */
function pvebill_Backups(array $params): array
{
    $input = pvebill_post_fields(['step', 'backup_id', 'intent_id', 'confirm']);
    return $input === null ? Module::refusedPage($params, 'Backups')
        : Module::instance()->clientBackups($params, $input);
}

/**
 * Client area: the service's reverse DNS names (R55): each address with its name and a form to
 * set it, and a form for another address of its IPv6 prefix.
 */
function pvebill_ReverseDNS(array $params): array
{
    $input = pvebill_post_fields(['step', 'address', 'hostname']);
    return $input === null ? Module::refusedPage($params, 'ReverseDNS')
        : Module::instance()->clientReverseDns($params, $input);
}
