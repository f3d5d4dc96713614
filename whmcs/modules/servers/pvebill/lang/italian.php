<?php

// pvebill module texts: Italian. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Avvia';
$_LANG['pvebill_stop'] = 'Arresta';
$_LANG['pvebill_shutdown'] = 'Spegni';
$_LANG['pvebill_reboot'] = 'Riavvia';
$_LANG['pvebill_console'] = 'Apri console';
$_LANG['pvebill_reinstall'] = 'Reinstalla';
$_LANG['pvebill_snapshots'] = 'Snapshot';
$_LANG['pvebill_backups'] = 'Backup';
$_LANG['pvebill_service'] = 'Servizio';
$_LANG['pvebill_monitoring'] = 'Monitoraggio';
$_LANG['pvebill_usage'] = 'Utilizzo';
$_LANG['pvebill_overview'] = 'Panoramica';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Stato';
$_LANG['pvebill_power'] = 'Alimentazione';
$_LANG['pvebill_hostname'] = 'Nome host';
$_LANG['pvebill_guest_type'] = 'Tipo di guest';
$_LANG['pvebill_plan'] = 'Piano';
$_LANG['pvebill_ip_addresses'] = 'Indirizzi IP';
$_LANG['pvebill_vm'] = 'Macchina virtuale';
$_LANG['pvebill_container'] = 'Container';
$_LANG['pvebill_state_provisioning'] = 'In preparazione';
$_LANG['pvebill_state_active'] = 'Attivo';
$_LANG['pvebill_state_suspended'] = 'Sospeso';
$_LANG['pvebill_state_limited'] = 'Limitato';
$_LANG['pvebill_state_terminated'] = 'Cessato';
$_LANG['pvebill_state_needs_reconciliation'] = 'In attesa di un amministratore';
$_LANG['pvebill_state_failed'] = 'Non riuscito';
$_LANG['pvebill_power_running'] = 'In esecuzione';
$_LANG['pvebill_power_stopped'] = 'Arrestato';
$_LANG['pvebill_power_paused'] = 'In pausa';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Memoria';
$_LANG['pvebill_disk'] = 'Disco';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Rete';
$_LANG['pvebill_network_in'] = 'Rete in entrata';
$_LANG['pvebill_network_out'] = 'Rete in uscita';
$_LANG['pvebill_received'] = 'Ricevuti';
$_LANG['pvebill_sent'] = 'Inviati';
$_LANG['pvebill_uptime'] = 'Tempo di attività';
$_LANG['pvebill_guest_agent'] = 'Agente guest';
$_LANG['pvebill_not_available'] = 'Non disponibile';
$_LANG['pvebill_yes'] = 'Sì';
$_LANG['pvebill_no'] = 'No';
$_LANG['pvebill_used_of'] = '{used} di {max}';
$_LANG['pvebill_range_day'] = 'Ultimo giorno';
$_LANG['pvebill_range_week'] = 'Ultima settimana';
$_LANG['pvebill_range_month'] = 'Ultimo mese';
$_LANG['pvebill_plan_limit'] = 'Limite del piano: {limit}';
$_LANG['pvebill_no_data'] = 'Nessun dato per questo periodo';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Questo modulo è scaduto o non proviene da questa pagina, quindi non è stato fatto nulla. Ricarica la pagina e riprova.';
$_LANG['pvebill_mount'] = 'Punto di montaggio';
$_LANG['pvebill_path'] = 'Percorso';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Dati';
$_LANG['pvebill_afterwards'] = 'Dopo';
$_LANG['pvebill_data_erased'] = 'Cancellato: tutto ciò che è su questo volume viene eliminato';
$_LANG['pvebill_data_untouched'] = 'Invariato: i dati restano dove sono';
$_LANG['pvebill_data_excluded'] = 'Escluso: appartiene a un altro guest e non viene toccato';
$_LANG['pvebill_mount_recreated'] = 'Ricreato vuoto';
$_LANG['pvebill_mount_removed'] = 'Non più montato';
$_LANG['pvebill_mount_kept'] = 'Montato di nuovo';
$_LANG['pvebill_snapshots_deleted'] = 'Questi snapshot vengono eliminati insieme al server:';
$_LANG['pvebill_delete'] = 'Elimina';

// Backups.
$_LANG['pvebill_backup_now'] = 'Esegui backup ora';
$_LANG['pvebill_created'] = 'Creato';
$_LANG['pvebill_size'] = 'Dimensione';
$_LANG['pvebill_protected'] = 'Protetto';
$_LANG['pvebill_restore'] = 'Ripristina…';
$_LANG['pvebill_restore_title'] = 'Ripristina {backup}';
$_LANG['pvebill_restore_warning'] = 'Il server viene sostituito da questo backup. Tutto ciò che è stato scritto dopo il backup va perso.';
$_LANG['pvebill_restore_confirm'] = 'Ho compreso che i dati contrassegnati come «Cancellato» vengono sostituiti dal backup.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Ho compreso che i dati contrassegnati come «Cancellato» e gli snapshot elencati vengono sostituiti dal backup.';
$_LANG['pvebill_restore_now'] = 'Ripristina ora';
$_LANG['pvebill_no_backups'] = 'Nessun backup per ora.';
$_LANG['pvebill_backup_created'] = 'Il backup è stato eseguito.';
$_LANG['pvebill_backup_deleted'] = 'Il backup è stato eliminato.';
$_LANG['pvebill_backup_restored'] = 'Il server è stato ripristinato dal backup.';
$_LANG['pvebill_restore_tick'] = 'Spunta la casella per confermare che i dati contrassegnati come «Cancellato» saranno sostituiti dal backup.';
$_LANG['pvebill_restore_pending'] = 'pvebill sta ancora preparando l’anteprima del ripristino. Ricarica questa pagina tra un momento.';
$_LANG['pvebill_no_backup_chosen'] = 'Non è stato scelto alcun backup.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} snapshot usati su {max}.';
$_LANG['pvebill_name'] = 'Nome';
$_LANG['pvebill_description'] = 'Descrizione';
$_LANG['pvebill_taken'] = 'Creato';
$_LANG['pvebill_rollback_warning'] = 'Tutto ciò che è stato scritto dopo questo snapshot va perso. Per confermare, digita il suo nome:';
$_LANG['pvebill_rollback'] = 'Ripristina snapshot';
$_LANG['pvebill_snapshot_name_help'] = 'Nome (una lettera, poi lettere, cifre, «_» o «-»; al massimo 40)';
$_LANG['pvebill_snapshot_take'] = 'Crea uno snapshot';
$_LANG['pvebill_snapshot_taken'] = 'Lo snapshot è stato creato.';
$_LANG['pvebill_snapshot_deleted'] = 'Lo snapshot è stato eliminato.';
$_LANG['pvebill_snapshot_rolled_back'] = 'Il server è stato riportato allo snapshot.';
$_LANG['pvebill_rollback_mistyped'] = 'Digita esattamente il nome dello snapshot per confermare il ripristino.';

// Reinstall.
$_LANG['pvebill_os'] = 'Sistema operativo';
$_LANG['pvebill_rootfs_now'] = 'Disco root attuale';
$_LANG['pvebill_rootfs_after'] = 'Disco root dopo la reinstallazione';
$_LANG['pvebill_root_password'] = 'Nuova password di root';
$_LANG['pvebill_reinstall_confirm'] = 'Ho compreso che i dati contrassegnati come «Cancellato» vengono eliminati.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Ho compreso che i dati contrassegnati come «Cancellato» e gli snapshot elencati vengono eliminati.';
$_LANG['pvebill_reinstall_now'] = 'Reinstalla ora';
$_LANG['pvebill_reinstall_tick'] = 'Spunta la casella per confermare che i dati contrassegnati come «Cancellato» saranno eliminati.';
$_LANG['pvebill_password_short'] = 'Scegli una password di root di almeno 8 caratteri.';
$_LANG['pvebill_reinstall_done'] = 'La reinstallazione è terminata. Accedi con la nuova password di root.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill sta ancora preparando l’anteprima. Ricarica questa pagina tra un momento.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'La reinstallazione si è interrotta dopo la cancellazione del vecchio sistema. Inserisci una password di root per completarla: pvebill non la memorizza mai.';
$_LANG['pvebill_send_password'] = 'Completa la reinstallazione';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'È temporaneo: riprova l’azione più tardi.';
$_LANG['pvebill_http_status'] = 'HTTP {status} da pvebill';
$_LANG['pvebill_in_progress'] = 'In corso: pvebill sta ancora lavorando a questa azione ({what}){ref}. Ripeti l’azione tra un minuto per ottenere il risultato; ripeterla è sicuro e non rifà il lavoro.';
$_LANG['pvebill_operation'] = 'operazione';
$_LANG['pvebill_stage'] = 'fase';
$_LANG['pvebill_unreachable'] = 'Non è stato possibile raggiungere pvebill ({error}). Riprovare è sicuro: pvebill riconosce il nuovo tentativo dalla sua Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'L’azione «{what}» non è riuscita:';
$_LANG['pvebill_op_reconcile'] = 'L’azione «{what}» si è fermata a metà e un amministratore deve riconciliarla in pvebill:';

$_LANG['pvebill_no_restore_preview'] = 'Non c’è alcuna anteprima di ripristino da applicare; scegli di nuovo il backup.';
$_LANG['pvebill_restore_not_applicable'] = 'Questa anteprima di ripristino è {state} e non può essere applicata; scegli di nuovo il backup.';
$_LANG['pvebill_no_reinstall_preview'] = 'Non c’è alcuna anteprima di reinstallazione da applicare; richiedi prima un’anteprima.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Questa anteprima di reinstallazione è {state} e non può essere applicata; richiedine una nuova.';
$_LANG['pvebill_reinstall_ended'] = 'La reinstallazione si è conclusa nello stato {state} (intento {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Non c’è ancora un’anteprima di reinstallazione; premi prima «Reinstallazione: anteprima».';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Reinstallazione: anteprima';
$_LANG['pvebill_admin_reinstall_apply'] = 'Reinstallazione: applica';
$_LANG['pvebill_admin_tab_console'] = 'Console pvebill';
$_LANG['pvebill_admin_tab_reinstall'] = 'Reinstallazione pvebill';
$_LANG['pvebill_admin_no_preview'] = 'Nessuna anteprima di reinstallazione per ora.';
$_LANG['pvebill_admin_state'] = 'Stato';
$_LANG['pvebill_admin_console_new_tab'] = 'La console si apre in una nuova scheda dal link «Apri console» nella scheda del servizio.';
$_LANG['pvebill_admin_console_here'] = 'Non è stato possibile aprire qui la console; usa il link «Apri console» nella scheda del servizio.';
$_LANG['pvebill_admin_cfg_plan'] = 'Piano';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'Codice del piano pvebill (GET /v1/plans), ad es. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Tipo di guest';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Fissato dal prodotto o scelto dal cliente all’ordine';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'L’unico tipo del piano';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Scelta del cliente (opzione configurabile «{option}»)';
$_LANG['pvebill_admin_cfg_os'] = 'Sistema operativo';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Sistema predefinito dal catalogo del piano; un’opzione configurabile «{option}» lo sostituisce';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Non è stata indicata una nuova password.';
$_LANG['pvebill_metric_traffic_in'] = 'Traffico in entrata';
$_LANG['pvebill_metric_traffic_out'] = 'Traffico in uscita';
$_LANG['pvebill_metric_backup_storage'] = 'Spazio dei backup';
$_LANG['pvebill_metric_memory_avg'] = 'Memoria (media)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (media)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'DNS inverso';
$_LANG['pvebill_ip_prefix'] = 'Prefisso IPv6';
$_LANG['pvebill_rdns_address'] = 'Indirizzo';
$_LANG['pvebill_rdns_hostname'] = 'Nome DNS inverso';
$_LANG['pvebill_rdns_status'] = 'Stato';
$_LANG['pvebill_rdns_save'] = 'Salva';
$_LANG['pvebill_rdns_saved'] = 'Il nome DNS inverso è stato salvato e pubblicato.';
$_LANG['pvebill_rdns_pending'] = 'Il nome DNS inverso è stato salvato; sarà pubblicato appena il server DNS risponde.';
$_LANG['pvebill_rdns_other_address'] = 'Un altro indirizzo del tuo prefisso IPv6 {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Questo servizio non ha indirizzi IP.';
$_LANG['pvebill_rdns_status_pending'] = 'In attesa del server DNS';
$_LANG['pvebill_rdns_status_synced'] = 'Pubblicato';
$_LANG['pvebill_rdns_status_failed'] = 'Rifiutato dal server DNS';
$_LANG['pvebill_rdns_not_set'] = 'Non impostato';
$_LANG['pvebill_rdns_hostname_help'] = 'Un nome host completo, come mail.example.com (senza punto finale).';
$_LANG['pvebill_admin_tab_rdns'] = 'DNS inverso pvebill';
$_LANG['pvebill_admin_tab_prefix'] = 'Prefisso IPv6 pvebill';
