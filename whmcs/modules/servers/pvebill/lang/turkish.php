<?php

// pvebill module texts: Turkish. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Başlat';
$_LANG['pvebill_stop'] = 'Durdur';
$_LANG['pvebill_shutdown'] = 'Kapat';
$_LANG['pvebill_reboot'] = 'Yeniden başlat';
$_LANG['pvebill_console'] = 'Konsolu aç';
$_LANG['pvebill_reinstall'] = 'Yeniden kur';
$_LANG['pvebill_snapshots'] = 'Anlık görüntüler';
$_LANG['pvebill_backups'] = 'Yedekler';
$_LANG['pvebill_service'] = 'Hizmet';
$_LANG['pvebill_monitoring'] = 'İzleme';
$_LANG['pvebill_usage'] = 'Kullanım';
$_LANG['pvebill_overview'] = 'Genel bakış';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Durum';
$_LANG['pvebill_power'] = 'Güç';
$_LANG['pvebill_hostname'] = 'Ana makine adı';
$_LANG['pvebill_guest_type'] = 'Konuk türü';
$_LANG['pvebill_plan'] = 'Plan';
$_LANG['pvebill_ip_addresses'] = 'IP adresleri';
$_LANG['pvebill_vm'] = 'Sanal makine';
$_LANG['pvebill_container'] = 'Kapsayıcı';
$_LANG['pvebill_state_provisioning'] = 'Hazırlanıyor';
$_LANG['pvebill_state_active'] = 'Etkin';
$_LANG['pvebill_state_suspended'] = 'Askıya alındı';
$_LANG['pvebill_state_limited'] = 'Kısıtlı';
$_LANG['pvebill_state_terminated'] = 'Sonlandırıldı';
$_LANG['pvebill_state_needs_reconciliation'] = 'Bir yöneticiyi bekliyor';
$_LANG['pvebill_state_failed'] = 'Başarısız';
$_LANG['pvebill_power_running'] = 'Çalışıyor';
$_LANG['pvebill_power_stopped'] = 'Durduruldu';
$_LANG['pvebill_power_paused'] = 'Duraklatıldı';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Bellek';
$_LANG['pvebill_disk'] = 'Disk';
$_LANG['pvebill_swap'] = 'Takas alanı';
$_LANG['pvebill_network'] = 'Ağ';
$_LANG['pvebill_network_in'] = 'Gelen ağ trafiği';
$_LANG['pvebill_network_out'] = 'Giden ağ trafiği';
$_LANG['pvebill_received'] = 'Alınan';
$_LANG['pvebill_sent'] = 'Gönderilen';
$_LANG['pvebill_uptime'] = 'Çalışma süresi';
$_LANG['pvebill_guest_agent'] = 'Konuk aracısı';
$_LANG['pvebill_not_available'] = 'Mevcut değil';
$_LANG['pvebill_yes'] = 'Evet';
$_LANG['pvebill_no'] = 'Hayır';
$_LANG['pvebill_used_of'] = '{used} / {max}';
$_LANG['pvebill_range_day'] = 'Son gün';
$_LANG['pvebill_range_week'] = 'Son hafta';
$_LANG['pvebill_range_month'] = 'Son ay';
$_LANG['pvebill_plan_limit'] = 'Plan sınırı: {limit}';
$_LANG['pvebill_no_data'] = 'Bu dönem için veri yok';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Bu formun süresi doldu veya form bu sayfadan gelmedi; bu yüzden hiçbir işlem yapılmadı. Sayfayı yeniden yükleyip tekrar deneyin.';
$_LANG['pvebill_mount'] = 'Bağlama noktası';
$_LANG['pvebill_path'] = 'Yol';
$_LANG['pvebill_volume'] = 'Birim';
$_LANG['pvebill_data'] = 'Veriler';
$_LANG['pvebill_afterwards'] = 'Sonrasında';
$_LANG['pvebill_data_erased'] = 'Silinir: bu birimdeki her şey silinir';
$_LANG['pvebill_data_untouched'] = 'Dokunulmaz: veriler olduğu yerde kalır';
$_LANG['pvebill_data_excluded'] = 'Hariç: başka bir konuğa aittir ve olduğu gibi bırakılır';
$_LANG['pvebill_mount_recreated'] = 'Boş olarak yeniden oluşturulur';
$_LANG['pvebill_mount_removed'] = 'Artık bağlanmaz';
$_LANG['pvebill_mount_kept'] = 'Yeniden bağlanır';
$_LANG['pvebill_snapshots_deleted'] = 'Bu anlık görüntüler sunucuyla birlikte silinir:';
$_LANG['pvebill_delete'] = 'Sil';

// Backups.
$_LANG['pvebill_backup_now'] = 'Şimdi yedekle';
$_LANG['pvebill_created'] = 'Oluşturulma';
$_LANG['pvebill_size'] = 'Boyut';
$_LANG['pvebill_protected'] = 'Korumalı';
$_LANG['pvebill_restore'] = 'Geri yükle…';
$_LANG['pvebill_restore_title'] = '{backup} geri yükleniyor';
$_LANG['pvebill_restore_warning'] = 'Sunucu bu yedekle değiştirilir. Yedekten sonra yazılan her şey kaybolur.';
$_LANG['pvebill_restore_confirm'] = '"Silinir" olarak işaretlenen verilerin yedekle değiştirileceğini anlıyorum.';
$_LANG['pvebill_restore_confirm_snapshots'] = '"Silinir" olarak işaretlenen verilerin ve listelenen anlık görüntülerin yedekle değiştirileceğini anlıyorum.';
$_LANG['pvebill_restore_now'] = 'Şimdi geri yükle';
$_LANG['pvebill_no_backups'] = 'Henüz yedek yok.';
$_LANG['pvebill_backup_created'] = 'Yedek alındı.';
$_LANG['pvebill_backup_deleted'] = 'Yedek silindi.';
$_LANG['pvebill_backup_restored'] = 'Sunucu yedekten geri yüklendi.';
$_LANG['pvebill_restore_tick'] = '"Silinir" olarak işaretlenen verilerin yedekle değiştirileceğini onaylamak için kutuyu işaretleyin.';
$_LANG['pvebill_restore_pending'] = 'pvebill geri yükleme önizlemesini hâlâ hazırlıyor. Bu sayfayı birazdan yeniden yükleyin.';
$_LANG['pvebill_no_backup_chosen'] = 'Hiçbir yedek seçilmedi.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{max} anlık görüntüden {count} tanesi kullanılıyor.';
$_LANG['pvebill_name'] = 'Ad';
$_LANG['pvebill_description'] = 'Açıklama';
$_LANG['pvebill_taken'] = 'Alınma';
$_LANG['pvebill_rollback_warning'] = 'Bu anlık görüntüden sonra yazılan her şey kaybolur. Onaylamak için adını yazın:';
$_LANG['pvebill_rollback'] = 'Geri al';
$_LANG['pvebill_snapshot_name_help'] = 'Ad (bir harf, ardından harfler, rakamlar, "_" veya "-"; en fazla 40)';
$_LANG['pvebill_snapshot_take'] = 'Anlık görüntü al';
$_LANG['pvebill_snapshot_taken'] = 'Anlık görüntü alındı.';
$_LANG['pvebill_snapshot_deleted'] = 'Anlık görüntü silindi.';
$_LANG['pvebill_snapshot_rolled_back'] = 'Sunucu anlık görüntüye geri alındı.';
$_LANG['pvebill_rollback_mistyped'] = 'Geri almayı onaylamak için anlık görüntünün adını tam olarak yazın.';

// Reinstall.
$_LANG['pvebill_os'] = 'İşletim sistemi';
$_LANG['pvebill_rootfs_now'] = 'Kök disk şu anda';
$_LANG['pvebill_rootfs_after'] = 'Yeniden kurulumdan sonra kök disk';
$_LANG['pvebill_root_password'] = 'Yeni root parolası';
$_LANG['pvebill_reinstall_confirm'] = '"Silinir" olarak işaretlenen verilerin silineceğini anlıyorum.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = '"Silinir" olarak işaretlenen verilerin ve listelenen anlık görüntülerin silineceğini anlıyorum.';
$_LANG['pvebill_reinstall_now'] = 'Şimdi yeniden kur';
$_LANG['pvebill_reinstall_tick'] = '"Silinir" olarak işaretlenen verilerin silineceğini onaylamak için kutuyu işaretleyin.';
$_LANG['pvebill_password_short'] = 'En az 8 karakterlik bir root parolası seçin.';
$_LANG['pvebill_reinstall_done'] = 'Yeniden kurulum tamamlandı. Yeni root parolasıyla oturum açın.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill önizlemeyi hâlâ hazırlıyor. Bu sayfayı birazdan yeniden yükleyin.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'Yeniden kurulum, eski sistem silindikten sonra kesildi. Tamamlamak için bir root parolası girin: pvebill onu asla saklamaz.';
$_LANG['pvebill_send_password'] = 'Yeniden kurulumu tamamla';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'Bu geçicidir: işlemi daha sonra yeniden deneyin.';
$_LANG['pvebill_http_status'] = 'pvebill\'den HTTP {status}';
$_LANG['pvebill_in_progress'] = 'Sürüyor: pvebill bu işlem ({what}) üzerinde hâlâ çalışıyor{ref}. Sonucu almak için işlemi bir dakika sonra yineleyin; yinelemek güvenlidir ve işi tekrar yapmaz.';
$_LANG['pvebill_operation'] = 'işlem';
$_LANG['pvebill_stage'] = 'aşama';
$_LANG['pvebill_unreachable'] = 'pvebill\'e ulaşılamadı ({error}). Yeniden denemek güvenlidir: pvebill yeniden denemeyi Idempotency-Key ile tanır.';
$_LANG['pvebill_op_failed'] = '"{what}" işlemi başarısız oldu:';
$_LANG['pvebill_op_reconcile'] = '"{what}" işlemi yarıda durdu ve bir yöneticinin bunu pvebill\'de uzlaştırması gerekiyor:';

$_LANG['pvebill_no_restore_preview'] = 'Uygulanacak bir geri yükleme önizlemesi yok; yedeği yeniden seçin.';
$_LANG['pvebill_restore_not_applicable'] = 'Bu geri yükleme önizlemesinin durumu {state}; uygulanamaz, yedeği yeniden seçin.';
$_LANG['pvebill_no_reinstall_preview'] = 'Uygulanacak bir yeniden kurulum önizlemesi yok; önce önizleme isteyin.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Bu yeniden kurulum önizlemesinin durumu {state}; uygulanamaz, yeni bir önizleme isteyin.';
$_LANG['pvebill_reinstall_ended'] = 'Yeniden kurulum {state} durumunda sona erdi (istek {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Henüz yeniden kurulum önizlemesi yok; önce "Yeniden kurulum: önizleme" düğmesine basın.';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Yeniden kurulum: önizleme';
$_LANG['pvebill_admin_reinstall_apply'] = 'Yeniden kurulum: uygula';
$_LANG['pvebill_admin_tab_console'] = 'pvebill konsolu';
$_LANG['pvebill_admin_tab_reinstall'] = 'pvebill yeniden kurulumu';
$_LANG['pvebill_admin_no_preview'] = 'Henüz yeniden kurulum önizlemesi yok.';
$_LANG['pvebill_admin_state'] = 'Durum';
$_LANG['pvebill_admin_console_new_tab'] = 'Konsol, hizmet sekmesindeki "Konsolu aç" bağlantısından yeni bir sekmede açılır.';
$_LANG['pvebill_admin_console_here'] = 'Konsol burada açılamadı; hizmet sekmesindeki "Konsolu aç" bağlantısını kullanın.';
$_LANG['pvebill_admin_cfg_plan'] = 'Plan';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'pvebill plan kodu (GET /v1/plans), örn. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Konuk türü';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Ürün tarafından sabitlenir veya müşteri sipariş sırasında seçer';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'Planın tek türü';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Müşterinin seçimi (yapılandırılabilir seçenek "{option}")';
$_LANG['pvebill_admin_cfg_os'] = 'İşletim sistemi';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Planın kataloğundaki varsayılan sistem; yapılandırılabilir "{option}" seçeneği önceliklidir';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Yeni parola belirtilmedi.';
$_LANG['pvebill_metric_traffic_in'] = 'Gelen trafik';
$_LANG['pvebill_metric_traffic_out'] = 'Giden trafik';
$_LANG['pvebill_metric_backup_storage'] = 'Yedek depolama alanı';
$_LANG['pvebill_metric_memory_avg'] = 'Bellek (ortalama)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (ortalama)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'Ters DNS';
$_LANG['pvebill_ip_prefix'] = 'IPv6 öneki';
$_LANG['pvebill_rdns_address'] = 'Adres';
$_LANG['pvebill_rdns_hostname'] = 'Ters DNS adı';
$_LANG['pvebill_rdns_status'] = 'Durum';
$_LANG['pvebill_rdns_save'] = 'Kaydet';
$_LANG['pvebill_rdns_saved'] = 'Ters DNS adı kaydedildi ve yayımlandı.';
$_LANG['pvebill_rdns_pending'] = 'Ters DNS adı kaydedildi; DNS sunucusu yanıt verir vermez yayımlanacak.';
$_LANG['pvebill_rdns_other_address'] = 'IPv6 önekinizden ({prefix}) başka bir adres:';
$_LANG['pvebill_rdns_no_addresses'] = 'Bu hizmetin IP adresi yok.';
$_LANG['pvebill_rdns_status_pending'] = 'DNS sunucusu bekleniyor';
$_LANG['pvebill_rdns_status_synced'] = 'Yayımlandı';
$_LANG['pvebill_rdns_status_failed'] = 'DNS sunucusu reddetti';
$_LANG['pvebill_rdns_not_set'] = 'Ayarlanmadı';
$_LANG['pvebill_rdns_hostname_help'] = 'mail.example.com gibi tam bir ana bilgisayar adı (sonunda nokta olmadan).';
$_LANG['pvebill_admin_tab_rdns'] = 'pvebill ters DNS';
$_LANG['pvebill_admin_tab_prefix'] = 'pvebill IPv6 öneki';
