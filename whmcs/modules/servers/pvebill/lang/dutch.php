<?php

// pvebill module texts: Dutch. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Starten';
$_LANG['pvebill_stop'] = 'Stoppen';
$_LANG['pvebill_shutdown'] = 'Afsluiten';
$_LANG['pvebill_reboot'] = 'Herstarten';
$_LANG['pvebill_console'] = 'Console openen';
$_LANG['pvebill_reinstall'] = 'Opnieuw installeren';
$_LANG['pvebill_snapshots'] = 'Snapshots';
$_LANG['pvebill_backups'] = 'Back-ups';
$_LANG['pvebill_service'] = 'Dienst';
$_LANG['pvebill_monitoring'] = 'Monitoring';
$_LANG['pvebill_usage'] = 'Gebruik';
$_LANG['pvebill_overview'] = 'Overzicht';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Status';
$_LANG['pvebill_power'] = 'Aan/uit';
$_LANG['pvebill_hostname'] = 'Hostnaam';
$_LANG['pvebill_guest_type'] = 'Type gast';
$_LANG['pvebill_plan'] = 'Pakket';
$_LANG['pvebill_ip_addresses'] = 'IP-adressen';
$_LANG['pvebill_vm'] = 'Virtuele machine';
$_LANG['pvebill_container'] = 'Container';
$_LANG['pvebill_state_provisioning'] = 'Wordt ingericht';
$_LANG['pvebill_state_active'] = 'Actief';
$_LANG['pvebill_state_suspended'] = 'Opgeschort';
$_LANG['pvebill_state_limited'] = 'Beperkt';
$_LANG['pvebill_state_terminated'] = 'Beëindigd';
$_LANG['pvebill_state_needs_reconciliation'] = 'Wacht op een beheerder';
$_LANG['pvebill_state_failed'] = 'Mislukt';
$_LANG['pvebill_power_running'] = 'Actief';
$_LANG['pvebill_power_stopped'] = 'Gestopt';
$_LANG['pvebill_power_paused'] = 'Gepauzeerd';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Geheugen';
$_LANG['pvebill_disk'] = 'Schijf';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Netwerk';
$_LANG['pvebill_network_in'] = 'Netwerk inkomend';
$_LANG['pvebill_network_out'] = 'Netwerk uitgaand';
$_LANG['pvebill_received'] = 'Ontvangen';
$_LANG['pvebill_sent'] = 'Verzonden';
$_LANG['pvebill_uptime'] = 'Uptime';
$_LANG['pvebill_guest_agent'] = 'Gastagent';
$_LANG['pvebill_not_available'] = 'Niet beschikbaar';
$_LANG['pvebill_yes'] = 'Ja';
$_LANG['pvebill_no'] = 'Nee';
$_LANG['pvebill_used_of'] = '{used} van {max}';
$_LANG['pvebill_range_day'] = 'Afgelopen dag';
$_LANG['pvebill_range_week'] = 'Afgelopen week';
$_LANG['pvebill_range_month'] = 'Afgelopen maand';
$_LANG['pvebill_plan_limit'] = 'Pakketlimiet {limit}';
$_LANG['pvebill_no_data'] = 'Geen gegevens voor deze periode';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Dit formulier is verlopen of komt niet van deze pagina, dus er is niets gedaan. Laad de pagina opnieuw en probeer het nog eens.';
$_LANG['pvebill_mount'] = 'Koppelpunt';
$_LANG['pvebill_path'] = 'Pad';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Gegevens';
$_LANG['pvebill_afterwards'] = 'Daarna';
$_LANG['pvebill_data_erased'] = 'Gewist: alles op dit volume wordt verwijderd';
$_LANG['pvebill_data_untouched'] = 'Onaangeroerd: de gegevens blijven waar ze zijn';
$_LANG['pvebill_data_excluded'] = 'Uitgesloten: het hoort bij een andere gast en blijft ongemoeid';
$_LANG['pvebill_mount_recreated'] = 'Leeg opnieuw aangemaakt';
$_LANG['pvebill_mount_removed'] = 'Niet meer gekoppeld';
$_LANG['pvebill_mount_kept'] = 'Opnieuw gekoppeld';
$_LANG['pvebill_snapshots_deleted'] = 'Deze snapshots worden samen met de server verwijderd:';
$_LANG['pvebill_delete'] = 'Verwijderen';

// Backups.
$_LANG['pvebill_backup_now'] = 'Nu back-up maken';
$_LANG['pvebill_created'] = 'Gemaakt';
$_LANG['pvebill_size'] = 'Grootte';
$_LANG['pvebill_protected'] = 'Beschermd';
$_LANG['pvebill_restore'] = 'Terugzetten…';
$_LANG['pvebill_restore_title'] = '{backup} terugzetten';
$_LANG['pvebill_restore_warning'] = 'De server wordt vervangen door deze back-up. Alles wat sinds de back-up is geschreven, gaat verloren.';
$_LANG['pvebill_restore_confirm'] = 'Ik begrijp dat de gegevens gemarkeerd als "Gewist" worden vervangen door de back-up.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Ik begrijp dat de gegevens gemarkeerd als "Gewist" en de vermelde snapshots worden vervangen door de back-up.';
$_LANG['pvebill_restore_now'] = 'Nu terugzetten';
$_LANG['pvebill_no_backups'] = 'Nog geen back-ups.';
$_LANG['pvebill_backup_created'] = 'De back-up is gemaakt.';
$_LANG['pvebill_backup_deleted'] = 'De back-up is verwijderd.';
$_LANG['pvebill_backup_restored'] = 'De server is teruggezet vanuit de back-up.';
$_LANG['pvebill_restore_tick'] = 'Vink het vakje aan om te bevestigen dat de gegevens gemarkeerd als "Gewist" worden vervangen door de back-up.';
$_LANG['pvebill_restore_pending'] = 'pvebill bereidt het voorbeeld van het terugzetten nog voor. Laad deze pagina zo opnieuw.';
$_LANG['pvebill_no_backup_chosen'] = 'Er is geen back-up gekozen.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} van {max} snapshots gebruikt.';
$_LANG['pvebill_name'] = 'Naam';
$_LANG['pvebill_description'] = 'Beschrijving';
$_LANG['pvebill_taken'] = 'Gemaakt';
$_LANG['pvebill_rollback_warning'] = 'Alles wat sinds deze snapshot is geschreven, gaat verloren. Typ ter bevestiging de naam:';
$_LANG['pvebill_rollback'] = 'Terugdraaien';
$_LANG['pvebill_snapshot_name_help'] = 'Naam (een letter, dan letters, cijfers, "_" of "-"; hoogstens 40)';
$_LANG['pvebill_snapshot_take'] = 'Snapshot maken';
$_LANG['pvebill_snapshot_taken'] = 'De snapshot is gemaakt.';
$_LANG['pvebill_snapshot_deleted'] = 'De snapshot is verwijderd.';
$_LANG['pvebill_snapshot_rolled_back'] = 'De server is teruggedraaid naar de snapshot.';
$_LANG['pvebill_rollback_mistyped'] = 'Typ de naam van de snapshot precies over om het terugdraaien te bevestigen.';

// Reinstall.
$_LANG['pvebill_os'] = 'Besturingssysteem';
$_LANG['pvebill_rootfs_now'] = 'Rootschijf nu';
$_LANG['pvebill_rootfs_after'] = 'Rootschijf na de herinstallatie';
$_LANG['pvebill_root_password'] = 'Nieuw rootwachtwoord';
$_LANG['pvebill_reinstall_confirm'] = 'Ik begrijp dat de gegevens gemarkeerd als "Gewist" worden verwijderd.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Ik begrijp dat de gegevens gemarkeerd als "Gewist" en de vermelde snapshots worden verwijderd.';
$_LANG['pvebill_reinstall_now'] = 'Nu opnieuw installeren';
$_LANG['pvebill_reinstall_tick'] = 'Vink het vakje aan om te bevestigen dat de gegevens gemarkeerd als "Gewist" worden verwijderd.';
$_LANG['pvebill_password_short'] = 'Kies een rootwachtwoord van minstens 8 tekens.';
$_LANG['pvebill_reinstall_done'] = 'De herinstallatie is klaar. Log in met het nieuwe rootwachtwoord.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill bereidt het voorbeeld nog voor. Laad deze pagina zo opnieuw.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'De herinstallatie is onderbroken nadat het oude systeem was gewist. Voer een rootwachtwoord in om haar af te ronden: pvebill bewaart het nooit.';
$_LANG['pvebill_send_password'] = 'Herinstallatie afronden';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'Dit is tijdelijk: probeer de actie later opnieuw.';
$_LANG['pvebill_http_status'] = 'HTTP {status} van pvebill';
$_LANG['pvebill_in_progress'] = 'Bezig: pvebill werkt nog aan deze actie ({what}){ref}. Herhaal de actie over een minuut om het resultaat op te halen; herhalen is veilig en doet het werk niet dubbel.';
$_LANG['pvebill_operation'] = 'bewerking';
$_LANG['pvebill_stage'] = 'stap';
$_LANG['pvebill_unreachable'] = 'pvebill was niet bereikbaar ({error}). Opnieuw proberen is veilig: pvebill herkent de herhaling aan de Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'De actie "{what}" is mislukt:';
$_LANG['pvebill_op_reconcile'] = 'De actie "{what}" is halverwege gestopt en een beheerder moet haar in pvebill rechtzetten:';

$_LANG['pvebill_no_restore_preview'] = 'Er is geen voorbeeld van het terugzetten om uit te voeren; kies de back-up opnieuw.';
$_LANG['pvebill_restore_not_applicable'] = 'Dit voorbeeld van het terugzetten is {state} en kan niet worden uitgevoerd; kies de back-up opnieuw.';
$_LANG['pvebill_no_reinstall_preview'] = 'Er is geen voorbeeld van de herinstallatie om uit te voeren; vraag eerst een voorbeeld op.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Dit voorbeeld van de herinstallatie is {state} en kan niet worden uitgevoerd; vraag een nieuw voorbeeld op.';
$_LANG['pvebill_reinstall_ended'] = 'De herinstallatie is geëindigd in toestand {state} (intentie {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Er is nog geen voorbeeld van een herinstallatie; druk eerst op "Herinstallatie: voorbeeld".';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Herinstallatie: voorbeeld';
$_LANG['pvebill_admin_reinstall_apply'] = 'Herinstallatie: uitvoeren';
$_LANG['pvebill_admin_tab_console'] = 'pvebill-console';
$_LANG['pvebill_admin_tab_reinstall'] = 'pvebill-herinstallatie';
$_LANG['pvebill_admin_no_preview'] = 'Nog geen voorbeeld van een herinstallatie.';
$_LANG['pvebill_admin_state'] = 'Toestand';
$_LANG['pvebill_admin_console_new_tab'] = 'De console opent in een nieuw tabblad via de link "Console openen" op het tabblad van de dienst.';
$_LANG['pvebill_admin_console_here'] = 'De console kon hier niet worden geopend; gebruik de link "Console openen" op het tabblad van de dienst.';
$_LANG['pvebill_admin_cfg_plan'] = 'Pakket';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'pvebill-pakketcode (GET /v1/plans), bijv. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Type gast';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Vastgelegd door het product of gekozen door de klant bij de bestelling';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'Het enige type van het pakket';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Keuze van de klant (configureerbare optie "{option}")';
$_LANG['pvebill_admin_cfg_os'] = 'Besturingssysteem';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Standaardsysteem uit de catalogus van het pakket; een configureerbare optie "{option}" gaat voor';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Er is geen nieuw wachtwoord opgegeven.';
$_LANG['pvebill_metric_traffic_in'] = 'Inkomend verkeer';
$_LANG['pvebill_metric_traffic_out'] = 'Uitgaand verkeer';
$_LANG['pvebill_metric_backup_storage'] = 'Back-upopslag';
$_LANG['pvebill_metric_memory_avg'] = 'Geheugen (gemiddeld)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (gemiddeld)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'Reverse DNS';
$_LANG['pvebill_ip_prefix'] = 'IPv6-prefix';
$_LANG['pvebill_rdns_address'] = 'Adres';
$_LANG['pvebill_rdns_hostname'] = 'Reverse-DNS-naam';
$_LANG['pvebill_rdns_status'] = 'Stand';
$_LANG['pvebill_rdns_save'] = 'Opslaan';
$_LANG['pvebill_rdns_saved'] = 'De reverse-DNS-naam is opgeslagen en gepubliceerd.';
$_LANG['pvebill_rdns_pending'] = 'De reverse-DNS-naam is opgeslagen; hij wordt gepubliceerd zodra de DNS-server antwoordt.';
$_LANG['pvebill_rdns_other_address'] = 'Een ander adres uit uw IPv6-prefix {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Deze dienst heeft geen IP-adres.';
$_LANG['pvebill_rdns_status_pending'] = 'Wacht op de DNS-server';
$_LANG['pvebill_rdns_status_synced'] = 'Gepubliceerd';
$_LANG['pvebill_rdns_status_failed'] = 'Geweigerd door de DNS-server';
$_LANG['pvebill_rdns_not_set'] = 'Niet ingesteld';
$_LANG['pvebill_rdns_hostname_help'] = 'Een volledige hostnaam, zoals mail.example.com (zonder punt aan het eind).';
$_LANG['pvebill_admin_tab_rdns'] = 'pvebill reverse DNS';
$_LANG['pvebill_admin_tab_prefix'] = 'pvebill IPv6-prefix';
