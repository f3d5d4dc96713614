<?php

// pvebill module texts: English (the fallback for every key). {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Start';
$_LANG['pvebill_stop'] = 'Stop';
$_LANG['pvebill_shutdown'] = 'Shut down';
$_LANG['pvebill_reboot'] = 'Reboot';
$_LANG['pvebill_console'] = 'Open console';
$_LANG['pvebill_reinstall'] = 'Reinstall';
$_LANG['pvebill_snapshots'] = 'Snapshots';
$_LANG['pvebill_backups'] = 'Backups';
$_LANG['pvebill_service'] = 'Service';
$_LANG['pvebill_monitoring'] = 'Monitoring';
$_LANG['pvebill_usage'] = 'Usage';
$_LANG['pvebill_overview'] = 'Overview';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Status';
$_LANG['pvebill_power'] = 'Power';
$_LANG['pvebill_hostname'] = 'Hostname';
$_LANG['pvebill_guest_type'] = 'Guest type';
$_LANG['pvebill_plan'] = 'Plan';
$_LANG['pvebill_ip_addresses'] = 'IP addresses';
$_LANG['pvebill_vm'] = 'Virtual machine';
$_LANG['pvebill_container'] = 'Container';
$_LANG['pvebill_state_provisioning'] = 'Being set up';
$_LANG['pvebill_state_active'] = 'Active';
$_LANG['pvebill_state_suspended'] = 'Suspended';
$_LANG['pvebill_state_limited'] = 'Limited';
$_LANG['pvebill_state_terminated'] = 'Terminated';
$_LANG['pvebill_state_needs_reconciliation'] = 'Waiting for an administrator';
$_LANG['pvebill_state_failed'] = 'Failed';
$_LANG['pvebill_power_running'] = 'Running';
$_LANG['pvebill_power_stopped'] = 'Stopped';
$_LANG['pvebill_power_paused'] = 'Paused';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Memory';
$_LANG['pvebill_disk'] = 'Disk';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Network';
$_LANG['pvebill_network_in'] = 'Network in';
$_LANG['pvebill_network_out'] = 'Network out';
$_LANG['pvebill_received'] = 'Received';
$_LANG['pvebill_sent'] = 'Sent';
$_LANG['pvebill_uptime'] = 'Uptime';
$_LANG['pvebill_guest_agent'] = 'Guest agent';
$_LANG['pvebill_not_available'] = 'Not available';
$_LANG['pvebill_yes'] = 'Yes';
$_LANG['pvebill_no'] = 'No';
$_LANG['pvebill_used_of'] = '{used} of {max}';
$_LANG['pvebill_range_day'] = 'Last day';
$_LANG['pvebill_range_week'] = 'Last week';
$_LANG['pvebill_range_month'] = 'Last month';
$_LANG['pvebill_plan_limit'] = 'Plan limit {limit}';
$_LANG['pvebill_no_data'] = 'No data for this period';

// Forms.
$_LANG['pvebill_token_invalid'] = 'This form has expired or did not come from this page, so nothing was done. '
    . 'Reload the page and try again.';
$_LANG['pvebill_mount'] = 'Mount';
$_LANG['pvebill_path'] = 'Path';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Data';
$_LANG['pvebill_afterwards'] = 'Afterwards';
$_LANG['pvebill_data_erased'] = 'Erased: everything on this volume is deleted';
$_LANG['pvebill_data_untouched'] = 'Untouched: the data stays where it is';
$_LANG['pvebill_data_excluded'] = 'Excluded: it belongs to another guest and is left alone';
$_LANG['pvebill_mount_recreated'] = 'Recreated empty';
$_LANG['pvebill_mount_removed'] = 'No longer mounted';
$_LANG['pvebill_mount_kept'] = 'Mounted again';
$_LANG['pvebill_snapshots_deleted'] = 'These snapshots are deleted with the server:';
$_LANG['pvebill_delete'] = 'Delete';

// Backups.
$_LANG['pvebill_backup_now'] = 'Back up now';
$_LANG['pvebill_created'] = 'Created';
$_LANG['pvebill_size'] = 'Size';
$_LANG['pvebill_protected'] = 'Protected';
$_LANG['pvebill_restore'] = 'Restore…';
$_LANG['pvebill_restore_title'] = 'Restore {backup}';
$_LANG['pvebill_restore_warning'] = 'The server is replaced by this backup. Everything written since the backup is lost.';
$_LANG['pvebill_restore_confirm'] = 'I understand that the data marked "Erased" is replaced by the backup.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'I understand that the data marked "Erased" and the snapshots listed '
    . 'are replaced by the backup.';
$_LANG['pvebill_restore_now'] = 'Restore now';
$_LANG['pvebill_no_backups'] = 'No backups yet.';
$_LANG['pvebill_backup_created'] = 'The backup has been made.';
$_LANG['pvebill_backup_deleted'] = 'The backup has been deleted.';
$_LANG['pvebill_backup_restored'] = 'The server has been restored from the backup.';
$_LANG['pvebill_restore_tick'] = 'Tick the box to confirm that the data marked "Erased" will be replaced by the backup.';
$_LANG['pvebill_restore_pending'] = 'pvebill is still preparing the restore preview. Reload this page in a moment.';
$_LANG['pvebill_no_backup_chosen'] = 'No backup was chosen.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} of {max} snapshots used.';
$_LANG['pvebill_name'] = 'Name';
$_LANG['pvebill_description'] = 'Description';
$_LANG['pvebill_taken'] = 'Taken';
$_LANG['pvebill_rollback_warning'] = 'Everything written since this snapshot is lost. To confirm, type its name:';
$_LANG['pvebill_rollback'] = 'Roll back';
$_LANG['pvebill_snapshot_name_help'] = 'Name (a letter, then letters, digits, "_" or "-"; up to 40)';
$_LANG['pvebill_snapshot_take'] = 'Take a snapshot';
$_LANG['pvebill_snapshot_taken'] = 'The snapshot was taken.';
$_LANG['pvebill_snapshot_deleted'] = 'The snapshot was deleted.';
$_LANG['pvebill_snapshot_rolled_back'] = 'The server was rolled back to the snapshot.';
$_LANG['pvebill_rollback_mistyped'] = 'Type the name of the snapshot exactly to confirm the rollback.';

// Reinstall.
$_LANG['pvebill_os'] = 'Operating system';
$_LANG['pvebill_rootfs_now'] = 'Root disk now';
$_LANG['pvebill_rootfs_after'] = 'Root disk after the reinstall';
$_LANG['pvebill_root_password'] = 'New root password';
$_LANG['pvebill_reinstall_confirm'] = 'I understand that the data marked "Erased" is deleted.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'I understand that the data marked "Erased" and the snapshots listed '
    . 'are deleted.';
$_LANG['pvebill_reinstall_now'] = 'Reinstall now';
$_LANG['pvebill_reinstall_tick'] = 'Tick the box to confirm that the data marked "Erased" will be deleted.';
$_LANG['pvebill_password_short'] = 'Choose a root password of at least 8 characters.';
$_LANG['pvebill_reinstall_done'] = 'The reinstall has finished. Log in with the new root password.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill is still preparing the preview. Reload this page in a moment.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'The reinstall was interrupted after the old system was erased. Enter a root password to finish it: pvebill never stores it.';
$_LANG['pvebill_send_password'] = 'Finish the reinstall';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'This is temporary: retry the action later.';
$_LANG['pvebill_http_status'] = 'HTTP {status} from pvebill';
$_LANG['pvebill_in_progress'] = 'In progress: pvebill is still working on this {what}{ref}. Retry the action in a minute to pick up the result; retrying is safe and does not repeat the work.';
$_LANG['pvebill_operation'] = 'operation';
$_LANG['pvebill_stage'] = 'stage';
$_LANG['pvebill_unreachable'] = 'pvebill could not be reached ({error}). Retrying is safe: pvebill recognises the retry by its Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'the {what} failed:';
$_LANG['pvebill_op_reconcile'] = 'the {what} stopped part-way and needs an administrator to reconcile it in pvebill:';

$_LANG['pvebill_no_restore_preview'] = 'There is no restore preview to apply; choose the backup again.';
$_LANG['pvebill_restore_not_applicable'] = 'This restore preview is {state} and cannot be applied; choose the backup again.';
$_LANG['pvebill_no_reinstall_preview'] = 'There is no reinstall preview to apply; preview first.';
$_LANG['pvebill_reinstall_not_applicable'] = 'This reinstall preview is {state} and cannot be applied; preview again.';
$_LANG['pvebill_reinstall_ended'] = 'The reinstall ended in state {state} (intent {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'There is no reinstall preview yet; press "Reinstall: preview" first.';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Reinstall: preview';
$_LANG['pvebill_admin_reinstall_apply'] = 'Reinstall: apply';
$_LANG['pvebill_admin_tab_console'] = 'pvebill console';
$_LANG['pvebill_admin_tab_reinstall'] = 'pvebill reinstall';
$_LANG['pvebill_admin_no_preview'] = 'No reinstall preview yet.';
$_LANG['pvebill_admin_state'] = 'State';
$_LANG['pvebill_admin_console_new_tab'] = 'The console opens in a new tab from the "Open console" link on the service tab.';
$_LANG['pvebill_admin_console_here'] = 'The console could not be opened here; use the "Open console" link on the '
    . 'service tab.';
$_LANG['pvebill_admin_cfg_plan'] = 'Plan';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'pvebill plan code (GET /v1/plans), e.g. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Guest type';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Fixed by the product, or chosen by the customer at order';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'The plan\'s only type';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Customer\'s choice (configurable option "{option}")';
$_LANG['pvebill_admin_cfg_os'] = 'Operating system';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Default OS from the plan\'s catalog; a configurable option "{option}" overrides it';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'No new password was given.';
$_LANG['pvebill_metric_traffic_in'] = 'Traffic in';
$_LANG['pvebill_metric_traffic_out'] = 'Traffic out';
$_LANG['pvebill_metric_backup_storage'] = 'Backup storage';
$_LANG['pvebill_metric_memory_avg'] = 'Memory (average)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (average)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'Reverse DNS';
$_LANG['pvebill_ip_prefix'] = 'IPv6 prefix';
$_LANG['pvebill_rdns_address'] = 'Address';
$_LANG['pvebill_rdns_hostname'] = 'Reverse DNS name';
$_LANG['pvebill_rdns_status'] = 'State';
$_LANG['pvebill_rdns_save'] = 'Save';
$_LANG['pvebill_rdns_saved'] = 'The reverse DNS name was saved and published.';
$_LANG['pvebill_rdns_pending'] = 'The reverse DNS name was saved; it will be published as soon as the DNS server answers.';
$_LANG['pvebill_rdns_other_address'] = 'Another address of your IPv6 prefix {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'This service has no IP address.';
$_LANG['pvebill_rdns_status_pending'] = 'Waiting for the DNS server';
$_LANG['pvebill_rdns_status_synced'] = 'Published';
$_LANG['pvebill_rdns_status_failed'] = 'Refused by the DNS server';
$_LANG['pvebill_rdns_not_set'] = 'Not set';
$_LANG['pvebill_rdns_hostname_help'] = 'A fully qualified host name, such as mail.example.com (no trailing dot).';
$_LANG['pvebill_admin_tab_rdns'] = 'pvebill reverse DNS';
$_LANG['pvebill_admin_tab_prefix'] = 'pvebill IPv6 prefix';
