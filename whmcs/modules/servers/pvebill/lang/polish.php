<?php

// pvebill module texts: Polish. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Uruchom';
$_LANG['pvebill_stop'] = 'Zatrzymaj';
$_LANG['pvebill_shutdown'] = 'Wyłącz';
$_LANG['pvebill_reboot'] = 'Uruchom ponownie';
$_LANG['pvebill_console'] = 'Otwórz konsolę';
$_LANG['pvebill_reinstall'] = 'Zainstaluj ponownie';
$_LANG['pvebill_snapshots'] = 'Migawki';
$_LANG['pvebill_backups'] = 'Kopie zapasowe';
$_LANG['pvebill_service'] = 'Usługa';
$_LANG['pvebill_monitoring'] = 'Monitorowanie';
$_LANG['pvebill_usage'] = 'Wykorzystanie';
$_LANG['pvebill_overview'] = 'Przegląd';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Stan usługi';
$_LANG['pvebill_power'] = 'Zasilanie';
$_LANG['pvebill_hostname'] = 'Nazwa hosta';
$_LANG['pvebill_guest_type'] = 'Typ gościa';
$_LANG['pvebill_plan'] = 'Plan';
$_LANG['pvebill_ip_addresses'] = 'Adresy IP';
$_LANG['pvebill_vm'] = 'Maszyna wirtualna';
$_LANG['pvebill_container'] = 'Kontener';
$_LANG['pvebill_state_provisioning'] = 'W przygotowaniu';
$_LANG['pvebill_state_active'] = 'Aktywna';
$_LANG['pvebill_state_suspended'] = 'Zawieszona';
$_LANG['pvebill_state_limited'] = 'Ograniczona';
$_LANG['pvebill_state_terminated'] = 'Zakończona';
$_LANG['pvebill_state_needs_reconciliation'] = 'Czeka na administratora';
$_LANG['pvebill_state_failed'] = 'Nieudana';
$_LANG['pvebill_power_running'] = 'Działa';
$_LANG['pvebill_power_stopped'] = 'Zatrzymany';
$_LANG['pvebill_power_paused'] = 'Wstrzymany';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Pamięć';
$_LANG['pvebill_disk'] = 'Dysk';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Sieć';
$_LANG['pvebill_network_in'] = 'Sieć – przychodzące';
$_LANG['pvebill_network_out'] = 'Sieć – wychodzące';
$_LANG['pvebill_received'] = 'Odebrane';
$_LANG['pvebill_sent'] = 'Wysłane';
$_LANG['pvebill_uptime'] = 'Czas działania';
$_LANG['pvebill_guest_agent'] = 'Agent gościa';
$_LANG['pvebill_not_available'] = 'Niedostępne';
$_LANG['pvebill_yes'] = 'Tak';
$_LANG['pvebill_no'] = 'Nie';
$_LANG['pvebill_used_of'] = '{used} z {max}';
$_LANG['pvebill_range_day'] = 'Ostatni dzień';
$_LANG['pvebill_range_week'] = 'Ostatni tydzień';
$_LANG['pvebill_range_month'] = 'Ostatni miesiąc';
$_LANG['pvebill_plan_limit'] = 'Limit planu: {limit}';
$_LANG['pvebill_no_data'] = 'Brak danych za ten okres';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Ten formularz wygasł lub nie pochodzi z tej strony, więc nic nie zostało zrobione. Odśwież stronę i spróbuj ponownie.';
$_LANG['pvebill_mount'] = 'Punkt montowania';
$_LANG['pvebill_path'] = 'Ścieżka';
$_LANG['pvebill_volume'] = 'Wolumin';
$_LANG['pvebill_data'] = 'Dane';
$_LANG['pvebill_afterwards'] = 'Potem';
$_LANG['pvebill_data_erased'] = 'Usunięte: cała zawartość tego woluminu zostaje skasowana';
$_LANG['pvebill_data_untouched'] = 'Nienaruszone: dane zostają tam, gdzie są';
$_LANG['pvebill_data_excluded'] = 'Wyłączone: należy do innego gościa i pozostaje bez zmian';
$_LANG['pvebill_mount_recreated'] = 'Tworzony od nowa jako pusty';
$_LANG['pvebill_mount_removed'] = 'Nie jest już montowany';
$_LANG['pvebill_mount_kept'] = 'Montowany ponownie';
$_LANG['pvebill_snapshots_deleted'] = 'Te migawki zostaną usunięte razem z serwerem:';
$_LANG['pvebill_delete'] = 'Usuń';

// Backups.
$_LANG['pvebill_backup_now'] = 'Utwórz kopię teraz';
$_LANG['pvebill_created'] = 'Utworzono';
$_LANG['pvebill_size'] = 'Rozmiar';
$_LANG['pvebill_protected'] = 'Chroniona';
$_LANG['pvebill_restore'] = 'Przywróć…';
$_LANG['pvebill_restore_title'] = 'Przywracanie {backup}';
$_LANG['pvebill_restore_warning'] = 'Serwer zostanie zastąpiony tą kopią zapasową. Wszystko, co zapisano od czasu jej utworzenia, zostanie utracone.';
$_LANG['pvebill_restore_confirm'] = 'Rozumiem, że dane oznaczone jako „Usunięte” zostaną zastąpione kopią zapasową.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Rozumiem, że dane oznaczone jako „Usunięte” i wymienione migawki zostaną zastąpione kopią zapasową.';
$_LANG['pvebill_restore_now'] = 'Przywróć teraz';
$_LANG['pvebill_no_backups'] = 'Nie ma jeszcze kopii zapasowych.';
$_LANG['pvebill_backup_created'] = 'Kopia zapasowa została utworzona.';
$_LANG['pvebill_backup_deleted'] = 'Kopia zapasowa została usunięta.';
$_LANG['pvebill_backup_restored'] = 'Serwer został przywrócony z kopii zapasowej.';
$_LANG['pvebill_restore_tick'] = 'Zaznacz pole, aby potwierdzić, że dane oznaczone jako „Usunięte” zostaną zastąpione kopią zapasową.';
$_LANG['pvebill_restore_pending'] = 'pvebill wciąż przygotowuje podgląd przywracania. Odśwież tę stronę za chwilę.';
$_LANG['pvebill_no_backup_chosen'] = 'Nie wybrano kopii zapasowej.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = 'Wykorzystane migawki: {count} z {max}.';
$_LANG['pvebill_name'] = 'Nazwa';
$_LANG['pvebill_description'] = 'Opis';
$_LANG['pvebill_taken'] = 'Utworzono';
$_LANG['pvebill_rollback_warning'] = 'Wszystko, co zapisano od czasu tej migawki, zostanie utracone. Aby potwierdzić, wpisz jej nazwę:';
$_LANG['pvebill_rollback'] = 'Przywróć migawkę';
$_LANG['pvebill_snapshot_name_help'] = 'Nazwa (litera, potem litery, cyfry, „_” lub „-”; najwyżej 40)';
$_LANG['pvebill_snapshot_take'] = 'Utwórz migawkę';
$_LANG['pvebill_snapshot_taken'] = 'Migawka została utworzona.';
$_LANG['pvebill_snapshot_deleted'] = 'Migawka została usunięta.';
$_LANG['pvebill_snapshot_rolled_back'] = 'Serwer został przywrócony do stanu z migawki.';
$_LANG['pvebill_rollback_mistyped'] = 'Wpisz dokładnie nazwę migawki, aby potwierdzić przywrócenie.';

// Reinstall.
$_LANG['pvebill_os'] = 'System operacyjny';
$_LANG['pvebill_rootfs_now'] = 'Dysk główny teraz';
$_LANG['pvebill_rootfs_after'] = 'Dysk główny po ponownej instalacji';
$_LANG['pvebill_root_password'] = 'Nowe hasło roota';
$_LANG['pvebill_reinstall_confirm'] = 'Rozumiem, że dane oznaczone jako „Usunięte” zostaną skasowane.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Rozumiem, że dane oznaczone jako „Usunięte” i wymienione migawki zostaną skasowane.';
$_LANG['pvebill_reinstall_now'] = 'Zainstaluj ponownie teraz';
$_LANG['pvebill_reinstall_tick'] = 'Zaznacz pole, aby potwierdzić, że dane oznaczone jako „Usunięte” zostaną skasowane.';
$_LANG['pvebill_password_short'] = 'Wybierz hasło roota o długości co najmniej 8 znaków.';
$_LANG['pvebill_reinstall_done'] = 'Ponowna instalacja zakończyła się. Zaloguj się nowym hasłem roota.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill wciąż przygotowuje podgląd. Odśwież tę stronę za chwilę.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'Ponowna instalacja została przerwana po usunięciu starego systemu. Wpisz hasło roota, aby ją dokończyć: pvebill nigdy go nie przechowuje.';
$_LANG['pvebill_send_password'] = 'Dokończ ponowną instalację';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'To stan przejściowy: ponów działanie później.';
$_LANG['pvebill_http_status'] = 'HTTP {status} z pvebill';
$_LANG['pvebill_in_progress'] = 'W toku: pvebill wciąż wykonuje to działanie ({what}){ref}. Ponów działanie za minutę, aby odebrać wynik; ponowienie jest bezpieczne i nie powtarza pracy.';
$_LANG['pvebill_operation'] = 'operacja';
$_LANG['pvebill_stage'] = 'etap';
$_LANG['pvebill_unreachable'] = 'Nie udało się połączyć z pvebill ({error}). Ponowienie jest bezpieczne: pvebill rozpoznaje je po kluczu Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'Działanie „{what}” nie powiodło się:';
$_LANG['pvebill_op_reconcile'] = 'Działanie „{what}” zatrzymało się w połowie i administrator musi je uzgodnić w pvebill:';

$_LANG['pvebill_no_restore_preview'] = 'Nie ma podglądu przywracania do wykonania; wybierz kopię zapasową ponownie.';
$_LANG['pvebill_restore_not_applicable'] = 'Ten podgląd przywracania ma stan {state} i nie można go wykonać; wybierz kopię zapasową ponownie.';
$_LANG['pvebill_no_reinstall_preview'] = 'Nie ma podglądu ponownej instalacji do wykonania; najpierw utwórz podgląd.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Ten podgląd ponownej instalacji ma stan {state} i nie można go wykonać; utwórz nowy podgląd.';
$_LANG['pvebill_reinstall_ended'] = 'Ponowna instalacja zakończyła się w stanie {state} (zamiar {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Nie ma jeszcze podglądu ponownej instalacji; najpierw naciśnij „Ponowna instalacja: podgląd”.';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Ponowna instalacja: podgląd';
$_LANG['pvebill_admin_reinstall_apply'] = 'Ponowna instalacja: wykonaj';
$_LANG['pvebill_admin_tab_console'] = 'Konsola pvebill';
$_LANG['pvebill_admin_tab_reinstall'] = 'Ponowna instalacja pvebill';
$_LANG['pvebill_admin_no_preview'] = 'Nie ma jeszcze podglądu ponownej instalacji.';
$_LANG['pvebill_admin_state'] = 'Stan';
$_LANG['pvebill_admin_console_new_tab'] = 'Konsola otwiera się w nowej karcie z linku „Otwórz konsolę” na karcie usługi.';
$_LANG['pvebill_admin_console_here'] = 'Nie udało się otworzyć konsoli tutaj; użyj linku „Otwórz konsolę” na karcie usługi.';
$_LANG['pvebill_admin_cfg_plan'] = 'Plan';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'Kod planu pvebill (GET /v1/plans), np. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Typ gościa';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Ustalony przez produkt lub wybrany przez klienta przy zamówieniu';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'Jedyny typ planu';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Wybór klienta (opcja konfigurowalna „{option}”)';
$_LANG['pvebill_admin_cfg_os'] = 'System operacyjny';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Domyślny system z katalogu planu; opcja konfigurowalna „{option}” ma pierwszeństwo';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Nie podano nowego hasła.';
$_LANG['pvebill_metric_traffic_in'] = 'Ruch przychodzący';
$_LANG['pvebill_metric_traffic_out'] = 'Ruch wychodzący';
$_LANG['pvebill_metric_backup_storage'] = 'Miejsce na kopie zapasowe';
$_LANG['pvebill_metric_memory_avg'] = 'Pamięć (średnio)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (średnio)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'Odwrotny DNS';
$_LANG['pvebill_ip_prefix'] = 'Prefiks IPv6';
$_LANG['pvebill_rdns_address'] = 'Adres';
$_LANG['pvebill_rdns_hostname'] = 'Nazwa odwrotnego DNS';
$_LANG['pvebill_rdns_status'] = 'Stan';
$_LANG['pvebill_rdns_save'] = 'Zapisz';
$_LANG['pvebill_rdns_saved'] = 'Nazwa odwrotnego DNS została zapisana i opublikowana.';
$_LANG['pvebill_rdns_pending'] = 'Nazwa odwrotnego DNS została zapisana; zostanie opublikowana, gdy serwer DNS odpowie.';
$_LANG['pvebill_rdns_other_address'] = 'Inny adres z Twojego prefiksu IPv6 {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Ta usługa nie ma adresu IP.';
$_LANG['pvebill_rdns_status_pending'] = 'Czeka na serwer DNS';
$_LANG['pvebill_rdns_status_synced'] = 'Opublikowana';
$_LANG['pvebill_rdns_status_failed'] = 'Odrzucona przez serwer DNS';
$_LANG['pvebill_rdns_not_set'] = 'Nie ustawiono';
$_LANG['pvebill_rdns_hostname_help'] = 'Pełna nazwa hosta, np. mail.example.com (bez kropki na końcu).';
$_LANG['pvebill_admin_tab_rdns'] = 'Odwrotny DNS pvebill';
$_LANG['pvebill_admin_tab_prefix'] = 'Prefiks IPv6 pvebill';
