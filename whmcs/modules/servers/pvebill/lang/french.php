<?php

// pvebill module texts: French. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Démarrer';
$_LANG['pvebill_stop'] = 'Arrêter';
$_LANG['pvebill_shutdown'] = 'Éteindre';
$_LANG['pvebill_reboot'] = 'Redémarrer';
$_LANG['pvebill_console'] = 'Ouvrir la console';
$_LANG['pvebill_reinstall'] = 'Réinstaller';
$_LANG['pvebill_snapshots'] = 'Instantanés';
$_LANG['pvebill_backups'] = 'Sauvegardes';
$_LANG['pvebill_service'] = 'Service';
$_LANG['pvebill_monitoring'] = 'Surveillance';
$_LANG['pvebill_usage'] = 'Consommation';
$_LANG['pvebill_overview'] = 'Aperçu';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Statut';
$_LANG['pvebill_power'] = 'Alimentation';
$_LANG['pvebill_hostname'] = 'Nom d’hôte';
$_LANG['pvebill_guest_type'] = 'Type d’invité';
$_LANG['pvebill_plan'] = 'Offre';
$_LANG['pvebill_ip_addresses'] = 'Adresses IP';
$_LANG['pvebill_vm'] = 'Machine virtuelle';
$_LANG['pvebill_container'] = 'Conteneur';
$_LANG['pvebill_state_provisioning'] = 'En cours de création';
$_LANG['pvebill_state_active'] = 'Actif';
$_LANG['pvebill_state_suspended'] = 'Suspendu';
$_LANG['pvebill_state_limited'] = 'Limité';
$_LANG['pvebill_state_terminated'] = 'Résilié';
$_LANG['pvebill_state_needs_reconciliation'] = 'En attente d’un administrateur';
$_LANG['pvebill_state_failed'] = 'Échec';
$_LANG['pvebill_power_running'] = 'En marche';
$_LANG['pvebill_power_stopped'] = 'Arrêté';
$_LANG['pvebill_power_paused'] = 'En pause';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Mémoire';
$_LANG['pvebill_disk'] = 'Disque';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Réseau';
$_LANG['pvebill_network_in'] = 'Réseau entrant';
$_LANG['pvebill_network_out'] = 'Réseau sortant';
$_LANG['pvebill_received'] = 'Reçu';
$_LANG['pvebill_sent'] = 'Envoyé';
$_LANG['pvebill_uptime'] = 'Durée de fonctionnement';
$_LANG['pvebill_guest_agent'] = 'Agent invité';
$_LANG['pvebill_not_available'] = 'Non disponible';
$_LANG['pvebill_yes'] = 'Oui';
$_LANG['pvebill_no'] = 'Non';
$_LANG['pvebill_used_of'] = '{used} sur {max}';
$_LANG['pvebill_range_day'] = 'Dernier jour';
$_LANG['pvebill_range_week'] = 'Dernière semaine';
$_LANG['pvebill_range_month'] = 'Dernier mois';
$_LANG['pvebill_plan_limit'] = 'Limite de l’offre : {limit}';
$_LANG['pvebill_no_data'] = 'Aucune donnée pour cette période';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Ce formulaire a expiré ou ne provient pas de cette page : rien n’a été fait. Rechargez la page et réessayez.';
$_LANG['pvebill_mount'] = 'Point de montage';
$_LANG['pvebill_path'] = 'Chemin';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Données';
$_LANG['pvebill_afterwards'] = 'Ensuite';
$_LANG['pvebill_data_erased'] = 'Effacé : tout le contenu de ce volume est supprimé';
$_LANG['pvebill_data_untouched'] = 'Intact : les données restent où elles sont';
$_LANG['pvebill_data_excluded'] = 'Exclu : il appartient à un autre invité et n’est pas modifié';
$_LANG['pvebill_mount_recreated'] = 'Recréé vide';
$_LANG['pvebill_mount_removed'] = 'N’est plus monté';
$_LANG['pvebill_mount_kept'] = 'Monté à nouveau';
$_LANG['pvebill_snapshots_deleted'] = 'Ces instantanés sont supprimés avec le serveur :';
$_LANG['pvebill_delete'] = 'Supprimer';

// Backups.
$_LANG['pvebill_backup_now'] = 'Sauvegarder maintenant';
$_LANG['pvebill_created'] = 'Créée le';
$_LANG['pvebill_size'] = 'Taille';
$_LANG['pvebill_protected'] = 'Protégée';
$_LANG['pvebill_restore'] = 'Restaurer…';
$_LANG['pvebill_restore_title'] = 'Restaurer {backup}';
$_LANG['pvebill_restore_warning'] = 'Le serveur est remplacé par cette sauvegarde. Tout ce qui a été écrit depuis la sauvegarde est perdu.';
$_LANG['pvebill_restore_confirm'] = 'Je comprends que les données marquées « Effacé » sont remplacées par la sauvegarde.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Je comprends que les données marquées « Effacé » et les instantanés listés sont remplacés par la sauvegarde.';
$_LANG['pvebill_restore_now'] = 'Restaurer maintenant';
$_LANG['pvebill_no_backups'] = 'Aucune sauvegarde pour l’instant.';
$_LANG['pvebill_backup_created'] = 'La sauvegarde a été effectuée.';
$_LANG['pvebill_backup_deleted'] = 'La sauvegarde a été supprimée.';
$_LANG['pvebill_backup_restored'] = 'Le serveur a été restauré à partir de la sauvegarde.';
$_LANG['pvebill_restore_tick'] = 'Cochez la case pour confirmer que les données marquées « Effacé » seront remplacées par la sauvegarde.';
$_LANG['pvebill_restore_pending'] = 'pvebill prépare encore l’aperçu de la restauration. Rechargez cette page dans un instant.';
$_LANG['pvebill_no_backup_chosen'] = 'Aucune sauvegarde n’a été choisie.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} instantanés utilisés sur {max}.';
$_LANG['pvebill_name'] = 'Nom';
$_LANG['pvebill_description'] = 'Description';
$_LANG['pvebill_taken'] = 'Pris le';
$_LANG['pvebill_rollback_warning'] = 'Tout ce qui a été écrit depuis cet instantané est perdu. Pour confirmer, saisissez son nom :';
$_LANG['pvebill_rollback'] = 'Revenir à cet instantané';
$_LANG['pvebill_snapshot_name_help'] = 'Nom (une lettre, puis des lettres, des chiffres, « _ » ou « - » ; 40 au plus)';
$_LANG['pvebill_snapshot_take'] = 'Prendre un instantané';
$_LANG['pvebill_snapshot_taken'] = 'L’instantané a été pris.';
$_LANG['pvebill_snapshot_deleted'] = 'L’instantané a été supprimé.';
$_LANG['pvebill_snapshot_rolled_back'] = 'Le serveur a été ramené à l’instantané.';
$_LANG['pvebill_rollback_mistyped'] = 'Saisissez exactement le nom de l’instantané pour confirmer le retour en arrière.';

// Reinstall.
$_LANG['pvebill_os'] = 'Système d’exploitation';
$_LANG['pvebill_rootfs_now'] = 'Disque racine actuel';
$_LANG['pvebill_rootfs_after'] = 'Disque racine après la réinstallation';
$_LANG['pvebill_root_password'] = 'Nouveau mot de passe root';
$_LANG['pvebill_reinstall_confirm'] = 'Je comprends que les données marquées « Effacé » sont supprimées.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Je comprends que les données marquées « Effacé » et les instantanés listés sont supprimés.';
$_LANG['pvebill_reinstall_now'] = 'Réinstaller maintenant';
$_LANG['pvebill_reinstall_tick'] = 'Cochez la case pour confirmer que les données marquées « Effacé » seront supprimées.';
$_LANG['pvebill_password_short'] = 'Choisissez un mot de passe root d’au moins 8 caractères.';
$_LANG['pvebill_reinstall_done'] = 'La réinstallation est terminée. Connectez-vous avec le nouveau mot de passe root.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill prépare encore l’aperçu. Rechargez cette page dans un instant.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'La réinstallation a été interrompue après l\'effacement de l\'ancien système. Saisissez un mot de passe root pour la terminer : pvebill ne le conserve jamais.';
$_LANG['pvebill_send_password'] = 'Terminer la réinstallation';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'C’est temporaire : réessayez l’action plus tard.';
$_LANG['pvebill_http_status'] = 'HTTP {status} de pvebill';
$_LANG['pvebill_in_progress'] = 'En cours : pvebill travaille encore sur cette action ({what}){ref}. Réessayez l’action dans une minute pour obtenir le résultat ; réessayer est sans risque et ne refait pas le travail.';
$_LANG['pvebill_operation'] = 'opération';
$_LANG['pvebill_stage'] = 'étape';
$_LANG['pvebill_unreachable'] = 'pvebill n’a pas pu être joint ({error}). Réessayer est sans risque : pvebill reconnaît la nouvelle tentative à son Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'L’action « {what} » a échoué :';
$_LANG['pvebill_op_reconcile'] = 'L’action « {what} » s’est arrêtée en cours de route ; un administrateur doit la réconcilier dans pvebill :';

$_LANG['pvebill_no_restore_preview'] = 'Il n’y a aucun aperçu de restauration à appliquer ; choisissez de nouveau la sauvegarde.';
$_LANG['pvebill_restore_not_applicable'] = 'Cet aperçu de restauration est {state} et ne peut pas être appliqué ; choisissez de nouveau la sauvegarde.';
$_LANG['pvebill_no_reinstall_preview'] = 'Il n’y a aucun aperçu de réinstallation à appliquer ; demandez d’abord un aperçu.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Cet aperçu de réinstallation est {state} et ne peut pas être appliqué ; demandez un nouvel aperçu.';
$_LANG['pvebill_reinstall_ended'] = 'La réinstallation s’est terminée dans l’état {state} (intention {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Il n’y a pas encore d’aperçu de réinstallation ; cliquez d’abord sur « Réinstallation : aperçu ».';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Réinstallation : aperçu';
$_LANG['pvebill_admin_reinstall_apply'] = 'Réinstallation : appliquer';
$_LANG['pvebill_admin_tab_console'] = 'Console pvebill';
$_LANG['pvebill_admin_tab_reinstall'] = 'Réinstallation pvebill';
$_LANG['pvebill_admin_no_preview'] = 'Pas encore d’aperçu de réinstallation.';
$_LANG['pvebill_admin_state'] = 'État';
$_LANG['pvebill_admin_console_new_tab'] = 'La console s’ouvre dans un nouvel onglet depuis le lien « Ouvrir la console » de l’onglet du service.';
$_LANG['pvebill_admin_console_here'] = 'La console n’a pas pu être ouverte ici ; utilisez le lien « Ouvrir la console » de l’onglet du service.';
$_LANG['pvebill_admin_cfg_plan'] = 'Offre';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'Code de l’offre pvebill (GET /v1/plans), p. ex. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Type d’invité';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Fixé par le produit ou choisi par le client à la commande';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'Le seul type de l’offre';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Choix du client (option configurable « {option} »)';
$_LANG['pvebill_admin_cfg_os'] = 'Système d’exploitation';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Système par défaut du catalogue de l’offre ; une option configurable « {option} » le remplace';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Aucun nouveau mot de passe n’a été indiqué.';
$_LANG['pvebill_metric_traffic_in'] = 'Trafic entrant';
$_LANG['pvebill_metric_traffic_out'] = 'Trafic sortant';
$_LANG['pvebill_metric_backup_storage'] = 'Stockage des sauvegardes';
$_LANG['pvebill_metric_memory_avg'] = 'Mémoire (moyenne)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (moyenne)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'DNS inverse';
$_LANG['pvebill_ip_prefix'] = 'Préfixe IPv6';
$_LANG['pvebill_rdns_address'] = 'Adresse';
$_LANG['pvebill_rdns_hostname'] = 'Nom DNS inverse';
$_LANG['pvebill_rdns_status'] = 'État';
$_LANG['pvebill_rdns_save'] = 'Enregistrer';
$_LANG['pvebill_rdns_saved'] = 'Le nom DNS inverse a été enregistré et publié.';
$_LANG['pvebill_rdns_pending'] = 'Le nom DNS inverse a été enregistré ; il sera publié dès que le serveur DNS répondra.';
$_LANG['pvebill_rdns_other_address'] = 'Une autre adresse de votre préfixe IPv6 {prefix} :';
$_LANG['pvebill_rdns_no_addresses'] = 'Ce service n’a pas d’adresse IP.';
$_LANG['pvebill_rdns_status_pending'] = 'En attente du serveur DNS';
$_LANG['pvebill_rdns_status_synced'] = 'Publié';
$_LANG['pvebill_rdns_status_failed'] = 'Refusé par le serveur DNS';
$_LANG['pvebill_rdns_not_set'] = 'Non défini';
$_LANG['pvebill_rdns_hostname_help'] = 'Un nom d’hôte complet, comme mail.example.com (sans point final).';
$_LANG['pvebill_admin_tab_rdns'] = 'DNS inverse pvebill';
$_LANG['pvebill_admin_tab_prefix'] = 'Préfixe IPv6 pvebill';
