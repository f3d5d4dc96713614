<?php

// pvebill module texts: German. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Starten';
$_LANG['pvebill_stop'] = 'Stoppen';
$_LANG['pvebill_shutdown'] = 'Herunterfahren';
$_LANG['pvebill_reboot'] = 'Neu starten';
$_LANG['pvebill_console'] = 'Konsole öffnen';
$_LANG['pvebill_reinstall'] = 'Neu installieren';
$_LANG['pvebill_snapshots'] = 'Snapshots';
$_LANG['pvebill_backups'] = 'Backups';
$_LANG['pvebill_service'] = 'Dienst';
$_LANG['pvebill_monitoring'] = 'Überwachung';
$_LANG['pvebill_usage'] = 'Nutzung';
$_LANG['pvebill_overview'] = 'Übersicht';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Status';
$_LANG['pvebill_power'] = 'Betriebszustand';
$_LANG['pvebill_hostname'] = 'Hostname';
$_LANG['pvebill_guest_type'] = 'Gasttyp';
$_LANG['pvebill_plan'] = 'Tarif';
$_LANG['pvebill_ip_addresses'] = 'IP-Adressen';
$_LANG['pvebill_vm'] = 'Virtuelle Maschine';
$_LANG['pvebill_container'] = 'Container';
$_LANG['pvebill_state_provisioning'] = 'Wird eingerichtet';
$_LANG['pvebill_state_active'] = 'Aktiv';
$_LANG['pvebill_state_suspended'] = 'Gesperrt';
$_LANG['pvebill_state_limited'] = 'Eingeschränkt';
$_LANG['pvebill_state_terminated'] = 'Gekündigt';
$_LANG['pvebill_state_needs_reconciliation'] = 'Wartet auf einen Administrator';
$_LANG['pvebill_state_failed'] = 'Fehlgeschlagen';
$_LANG['pvebill_power_running'] = 'Läuft';
$_LANG['pvebill_power_stopped'] = 'Gestoppt';
$_LANG['pvebill_power_paused'] = 'Angehalten';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Arbeitsspeicher';
$_LANG['pvebill_disk'] = 'Festplatte';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Netzwerk';
$_LANG['pvebill_network_in'] = 'Netzwerk eingehend';
$_LANG['pvebill_network_out'] = 'Netzwerk ausgehend';
$_LANG['pvebill_received'] = 'Empfangen';
$_LANG['pvebill_sent'] = 'Gesendet';
$_LANG['pvebill_uptime'] = 'Laufzeit';
$_LANG['pvebill_guest_agent'] = 'Gastagent';
$_LANG['pvebill_not_available'] = 'Nicht verfügbar';
$_LANG['pvebill_yes'] = 'Ja';
$_LANG['pvebill_no'] = 'Nein';
$_LANG['pvebill_used_of'] = '{used} von {max}';
$_LANG['pvebill_range_day'] = 'Letzter Tag';
$_LANG['pvebill_range_week'] = 'Letzte Woche';
$_LANG['pvebill_range_month'] = 'Letzter Monat';
$_LANG['pvebill_plan_limit'] = 'Tarifgrenze {limit}';
$_LANG['pvebill_no_data'] = 'Keine Daten für diesen Zeitraum';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Dieses Formular ist abgelaufen oder stammt nicht von dieser Seite, daher wurde nichts ausgeführt. Laden Sie die Seite neu und versuchen Sie es noch einmal.';
$_LANG['pvebill_mount'] = 'Einhängepunkt';
$_LANG['pvebill_path'] = 'Pfad';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Daten';
$_LANG['pvebill_afterwards'] = 'Danach';
$_LANG['pvebill_data_erased'] = 'Gelöscht: alles auf diesem Volume wird gelöscht';
$_LANG['pvebill_data_untouched'] = 'Unverändert: die Daten bleiben, wo sie sind';
$_LANG['pvebill_data_excluded'] = 'Ausgenommen: es gehört zu einem anderen Gast und bleibt unberührt';
$_LANG['pvebill_mount_recreated'] = 'Leer neu angelegt';
$_LANG['pvebill_mount_removed'] = 'Nicht mehr eingehängt';
$_LANG['pvebill_mount_kept'] = 'Wieder eingehängt';
$_LANG['pvebill_snapshots_deleted'] = 'Diese Snapshots werden mit dem Server gelöscht:';
$_LANG['pvebill_delete'] = 'Löschen';

// Backups.
$_LANG['pvebill_backup_now'] = 'Jetzt sichern';
$_LANG['pvebill_created'] = 'Erstellt';
$_LANG['pvebill_size'] = 'Größe';
$_LANG['pvebill_protected'] = 'Geschützt';
$_LANG['pvebill_restore'] = 'Wiederherstellen…';
$_LANG['pvebill_restore_title'] = '{backup} wiederherstellen';
$_LANG['pvebill_restore_warning'] = 'Der Server wird durch dieses Backup ersetzt. Alles, was seit dem Backup geschrieben wurde, geht verloren.';
$_LANG['pvebill_restore_confirm'] = 'Mir ist bewusst, dass die als „Gelöscht“ markierten Daten durch das Backup ersetzt werden.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Mir ist bewusst, dass die als „Gelöscht“ markierten Daten und die aufgeführten Snapshots durch das Backup ersetzt werden.';
$_LANG['pvebill_restore_now'] = 'Jetzt wiederherstellen';
$_LANG['pvebill_no_backups'] = 'Noch keine Backups.';
$_LANG['pvebill_backup_created'] = 'Das Backup wurde erstellt.';
$_LANG['pvebill_backup_deleted'] = 'Das Backup wurde gelöscht.';
$_LANG['pvebill_backup_restored'] = 'Der Server wurde aus dem Backup wiederhergestellt.';
$_LANG['pvebill_restore_tick'] = 'Setzen Sie das Häkchen, um zu bestätigen, dass die als „Gelöscht“ markierten Daten durch das Backup ersetzt werden.';
$_LANG['pvebill_restore_pending'] = 'pvebill bereitet die Vorschau der Wiederherstellung noch vor. Laden Sie diese Seite gleich neu.';
$_LANG['pvebill_no_backup_chosen'] = 'Es wurde kein Backup ausgewählt.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} von {max} Snapshots belegt.';
$_LANG['pvebill_name'] = 'Name';
$_LANG['pvebill_description'] = 'Beschreibung';
$_LANG['pvebill_taken'] = 'Erstellt';
$_LANG['pvebill_rollback_warning'] = 'Alles, was seit diesem Snapshot geschrieben wurde, geht verloren. Geben Sie zur Bestätigung seinen Namen ein:';
$_LANG['pvebill_rollback'] = 'Zurücksetzen';
$_LANG['pvebill_snapshot_name_help'] = 'Name (ein Buchstabe, dann Buchstaben, Ziffern, „_“ oder „-“; höchstens 40)';
$_LANG['pvebill_snapshot_take'] = 'Snapshot erstellen';
$_LANG['pvebill_snapshot_taken'] = 'Der Snapshot wurde erstellt.';
$_LANG['pvebill_snapshot_deleted'] = 'Der Snapshot wurde gelöscht.';
$_LANG['pvebill_snapshot_rolled_back'] = 'Der Server wurde auf den Snapshot zurückgesetzt.';
$_LANG['pvebill_rollback_mistyped'] = 'Geben Sie den Namen des Snapshots genau ein, um das Zurücksetzen zu bestätigen.';

// Reinstall.
$_LANG['pvebill_os'] = 'Betriebssystem';
$_LANG['pvebill_rootfs_now'] = 'Root-Festplatte jetzt';
$_LANG['pvebill_rootfs_after'] = 'Root-Festplatte nach der Neuinstallation';
$_LANG['pvebill_root_password'] = 'Neues Root-Passwort';
$_LANG['pvebill_reinstall_confirm'] = 'Mir ist bewusst, dass die als „Gelöscht“ markierten Daten gelöscht werden.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Mir ist bewusst, dass die als „Gelöscht“ markierten Daten und die aufgeführten Snapshots gelöscht werden.';
$_LANG['pvebill_reinstall_now'] = 'Jetzt neu installieren';
$_LANG['pvebill_reinstall_tick'] = 'Setzen Sie das Häkchen, um zu bestätigen, dass die als „Gelöscht“ markierten Daten gelöscht werden.';
$_LANG['pvebill_password_short'] = 'Wählen Sie ein Root-Passwort mit mindestens 8 Zeichen.';
$_LANG['pvebill_reinstall_done'] = 'Die Neuinstallation ist abgeschlossen. Melden Sie sich mit dem neuen Root-Passwort an.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill bereitet die Vorschau noch vor. Laden Sie diese Seite gleich neu.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'Die Neuinstallation wurde unterbrochen, nachdem das alte System gelöscht war. Geben Sie ein Root-Passwort ein, um sie abzuschließen: pvebill speichert es nie.';
$_LANG['pvebill_send_password'] = 'Neuinstallation abschließen';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'Das ist vorübergehend: Versuchen Sie die Aktion später noch einmal.';
$_LANG['pvebill_http_status'] = 'HTTP {status} von pvebill';
$_LANG['pvebill_in_progress'] = 'In Bearbeitung: pvebill arbeitet noch an dieser Aktion ({what}){ref}. Wiederholen Sie die Aktion in einer Minute, um das Ergebnis abzuholen; das ist sicher und führt die Arbeit nicht doppelt aus.';
$_LANG['pvebill_operation'] = 'Vorgang';
$_LANG['pvebill_stage'] = 'Schritt';
$_LANG['pvebill_unreachable'] = 'pvebill war nicht erreichbar ({error}). Ein erneuter Versuch ist sicher: pvebill erkennt ihn an seinem Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'Die Aktion „{what}“ ist fehlgeschlagen:';
$_LANG['pvebill_op_reconcile'] = 'Die Aktion „{what}“ wurde mittendrin angehalten; ein Administrator muss sie in pvebill abgleichen:';

$_LANG['pvebill_no_restore_preview'] = 'Es gibt keine Vorschau der Wiederherstellung, die ausgeführt werden könnte; wählen Sie das Backup erneut.';
$_LANG['pvebill_restore_not_applicable'] = 'Diese Vorschau der Wiederherstellung ist {state} und kann nicht ausgeführt werden; wählen Sie das Backup erneut.';
$_LANG['pvebill_no_reinstall_preview'] = 'Es gibt keine Vorschau der Neuinstallation, die ausgeführt werden könnte; erstellen Sie zuerst eine Vorschau.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Diese Vorschau der Neuinstallation ist {state} und kann nicht ausgeführt werden; erstellen Sie eine neue Vorschau.';
$_LANG['pvebill_reinstall_ended'] = 'Die Neuinstallation endete im Zustand {state} (Vorhaben {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Es gibt noch keine Vorschau der Neuinstallation; drücken Sie zuerst „Neuinstallation: Vorschau“.';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Neuinstallation: Vorschau';
$_LANG['pvebill_admin_reinstall_apply'] = 'Neuinstallation: ausführen';
$_LANG['pvebill_admin_tab_console'] = 'pvebill-Konsole';
$_LANG['pvebill_admin_tab_reinstall'] = 'pvebill-Neuinstallation';
$_LANG['pvebill_admin_no_preview'] = 'Noch keine Vorschau einer Neuinstallation.';
$_LANG['pvebill_admin_state'] = 'Zustand';
$_LANG['pvebill_admin_console_new_tab'] = 'Die Konsole öffnet sich in einem neuen Tab über den Link „Konsole öffnen“ im Dienst-Tab.';
$_LANG['pvebill_admin_console_here'] = 'Die Konsole konnte hier nicht geöffnet werden; verwenden Sie den Link „Konsole öffnen“ im Dienst-Tab.';
$_LANG['pvebill_admin_cfg_plan'] = 'Tarif';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'pvebill-Tarifcode (GET /v1/plans), z. B. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Gasttyp';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Vom Produkt festgelegt oder vom Kunden bei der Bestellung gewählt';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'Der einzige Typ des Tarifs';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Wahl des Kunden (konfigurierbare Option „{option}“)';
$_LANG['pvebill_admin_cfg_os'] = 'Betriebssystem';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Standard-Betriebssystem aus dem Katalog des Tarifs; eine konfigurierbare Option „{option}“ hat Vorrang';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Es wurde kein neues Passwort angegeben.';
$_LANG['pvebill_metric_traffic_in'] = 'Eingehender Datenverkehr';
$_LANG['pvebill_metric_traffic_out'] = 'Ausgehender Datenverkehr';
$_LANG['pvebill_metric_backup_storage'] = 'Backup-Speicher';
$_LANG['pvebill_metric_memory_avg'] = 'Arbeitsspeicher (Durchschnitt)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (Durchschnitt)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'Reverse-DNS';
$_LANG['pvebill_ip_prefix'] = 'IPv6-Präfix';
$_LANG['pvebill_rdns_address'] = 'Adresse';
$_LANG['pvebill_rdns_hostname'] = 'Reverse-DNS-Name';
$_LANG['pvebill_rdns_status'] = 'Stand';
$_LANG['pvebill_rdns_save'] = 'Speichern';
$_LANG['pvebill_rdns_saved'] = 'Der Reverse-DNS-Name wurde gespeichert und veröffentlicht.';
$_LANG['pvebill_rdns_pending'] = 'Der Reverse-DNS-Name wurde gespeichert; er wird veröffentlicht, sobald der DNS-Server antwortet.';
$_LANG['pvebill_rdns_other_address'] = 'Eine weitere Adresse Ihres IPv6-Präfixes {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Dieser Dienst hat keine IP-Adresse.';
$_LANG['pvebill_rdns_status_pending'] = 'Wartet auf den DNS-Server';
$_LANG['pvebill_rdns_status_synced'] = 'Veröffentlicht';
$_LANG['pvebill_rdns_status_failed'] = 'Vom DNS-Server abgelehnt';
$_LANG['pvebill_rdns_not_set'] = 'Nicht gesetzt';
$_LANG['pvebill_rdns_hostname_help'] = 'Ein vollständiger Hostname wie mail.example.com (ohne Punkt am Ende).';
$_LANG['pvebill_admin_tab_rdns'] = 'pvebill-Reverse-DNS';
$_LANG['pvebill_admin_tab_prefix'] = 'pvebill-IPv6-Präfix';
