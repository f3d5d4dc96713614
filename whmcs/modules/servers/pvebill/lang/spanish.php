<?php

// pvebill module texts: Spanish. {name} marks a value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Iniciar';
$_LANG['pvebill_stop'] = 'Detener';
$_LANG['pvebill_shutdown'] = 'Apagar';
$_LANG['pvebill_reboot'] = 'Reiniciar';
$_LANG['pvebill_console'] = 'Abrir consola';
$_LANG['pvebill_reinstall'] = 'Reinstalar';
$_LANG['pvebill_snapshots'] = 'Instantáneas';
$_LANG['pvebill_backups'] = 'Copias de seguridad';
$_LANG['pvebill_service'] = 'Servicio';
$_LANG['pvebill_monitoring'] = 'Supervisión';
$_LANG['pvebill_usage'] = 'Uso';
$_LANG['pvebill_overview'] = 'Resumen';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Estado';
$_LANG['pvebill_power'] = 'Encendido';
$_LANG['pvebill_hostname'] = 'Nombre de host';
$_LANG['pvebill_guest_type'] = 'Tipo de invitado';
$_LANG['pvebill_plan'] = 'Plan';
$_LANG['pvebill_ip_addresses'] = 'Direcciones IP';
$_LANG['pvebill_vm'] = 'Máquina virtual';
$_LANG['pvebill_container'] = 'Contenedor';
$_LANG['pvebill_state_provisioning'] = 'En preparación';
$_LANG['pvebill_state_active'] = 'Activo';
$_LANG['pvebill_state_suspended'] = 'Suspendido';
$_LANG['pvebill_state_limited'] = 'Limitado';
$_LANG['pvebill_state_terminated'] = 'Dado de baja';
$_LANG['pvebill_state_needs_reconciliation'] = 'A la espera de un administrador';
$_LANG['pvebill_state_failed'] = 'Fallido';
$_LANG['pvebill_power_running'] = 'En ejecución';
$_LANG['pvebill_power_stopped'] = 'Detenido';
$_LANG['pvebill_power_paused'] = 'En pausa';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Memoria';
$_LANG['pvebill_disk'] = 'Disco';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Red';
$_LANG['pvebill_network_in'] = 'Red entrante';
$_LANG['pvebill_network_out'] = 'Red saliente';
$_LANG['pvebill_received'] = 'Recibido';
$_LANG['pvebill_sent'] = 'Enviado';
$_LANG['pvebill_uptime'] = 'Tiempo en funcionamiento';
$_LANG['pvebill_guest_agent'] = 'Agente invitado';
$_LANG['pvebill_not_available'] = 'No disponible';
$_LANG['pvebill_yes'] = 'Sí';
$_LANG['pvebill_no'] = 'No';
$_LANG['pvebill_used_of'] = '{used} de {max}';
$_LANG['pvebill_range_day'] = 'Último día';
$_LANG['pvebill_range_week'] = 'Última semana';
$_LANG['pvebill_range_month'] = 'Último mes';
$_LANG['pvebill_plan_limit'] = 'Límite del plan: {limit}';
$_LANG['pvebill_no_data'] = 'No hay datos para este periodo';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Este formulario ha caducado o no procede de esta página, así que no se ha hecho nada. Vuelva a cargar la página e inténtelo de nuevo.';
$_LANG['pvebill_mount'] = 'Punto de montaje';
$_LANG['pvebill_path'] = 'Ruta';
$_LANG['pvebill_volume'] = 'Volumen';
$_LANG['pvebill_data'] = 'Datos';
$_LANG['pvebill_afterwards'] = 'Después';
$_LANG['pvebill_data_erased'] = 'Borrado: se elimina todo lo que hay en este volumen';
$_LANG['pvebill_data_untouched'] = 'Intacto: los datos se quedan donde están';
$_LANG['pvebill_data_excluded'] = 'Excluido: pertenece a otro invitado y no se toca';
$_LANG['pvebill_mount_recreated'] = 'Se vuelve a crear vacío';
$_LANG['pvebill_mount_removed'] = 'Ya no se monta';
$_LANG['pvebill_mount_kept'] = 'Se vuelve a montar';
$_LANG['pvebill_snapshots_deleted'] = 'Estas instantáneas se eliminan junto con el servidor:';
$_LANG['pvebill_delete'] = 'Eliminar';

// Backups.
$_LANG['pvebill_backup_now'] = 'Hacer copia ahora';
$_LANG['pvebill_created'] = 'Creada';
$_LANG['pvebill_size'] = 'Tamaño';
$_LANG['pvebill_protected'] = 'Protegida';
$_LANG['pvebill_restore'] = 'Restaurar…';
$_LANG['pvebill_restore_title'] = 'Restaurar {backup}';
$_LANG['pvebill_restore_warning'] = 'El servidor se sustituye por esta copia de seguridad. Todo lo escrito desde la copia se pierde.';
$_LANG['pvebill_restore_confirm'] = 'Entiendo que los datos marcados como «Borrado» se sustituyen por la copia de seguridad.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Entiendo que los datos marcados como «Borrado» y las instantáneas indicadas se sustituyen por la copia de seguridad.';
$_LANG['pvebill_restore_now'] = 'Restaurar ahora';
$_LANG['pvebill_no_backups'] = 'Todavía no hay copias de seguridad.';
$_LANG['pvebill_backup_created'] = 'La copia de seguridad se ha realizado.';
$_LANG['pvebill_backup_deleted'] = 'La copia de seguridad se ha eliminado.';
$_LANG['pvebill_backup_restored'] = 'El servidor se ha restaurado a partir de la copia de seguridad.';
$_LANG['pvebill_restore_tick'] = 'Marque la casilla para confirmar que los datos marcados como «Borrado» se sustituirán por la copia de seguridad.';
$_LANG['pvebill_restore_pending'] = 'pvebill todavía está preparando la vista previa de la restauración. Vuelva a cargar esta página en un momento.';
$_LANG['pvebill_no_backup_chosen'] = 'No se ha elegido ninguna copia de seguridad.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} de {max} instantáneas usadas.';
$_LANG['pvebill_name'] = 'Nombre';
$_LANG['pvebill_description'] = 'Descripción';
$_LANG['pvebill_taken'] = 'Tomada';
$_LANG['pvebill_rollback_warning'] = 'Todo lo escrito desde esta instantánea se pierde. Para confirmar, escriba su nombre:';
$_LANG['pvebill_rollback'] = 'Revertir';
$_LANG['pvebill_snapshot_name_help'] = 'Nombre (una letra y después letras, cifras, «_» o «-»; como máximo 40)';
$_LANG['pvebill_snapshot_take'] = 'Tomar una instantánea';
$_LANG['pvebill_snapshot_taken'] = 'La instantánea se ha tomado.';
$_LANG['pvebill_snapshot_deleted'] = 'La instantánea se ha eliminado.';
$_LANG['pvebill_snapshot_rolled_back'] = 'El servidor se ha revertido a la instantánea.';
$_LANG['pvebill_rollback_mistyped'] = 'Escriba exactamente el nombre de la instantánea para confirmar la reversión.';

// Reinstall.
$_LANG['pvebill_os'] = 'Sistema operativo';
$_LANG['pvebill_rootfs_now'] = 'Disco raíz actual';
$_LANG['pvebill_rootfs_after'] = 'Disco raíz tras la reinstalación';
$_LANG['pvebill_root_password'] = 'Nueva contraseña de root';
$_LANG['pvebill_reinstall_confirm'] = 'Entiendo que los datos marcados como «Borrado» se eliminan.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Entiendo que los datos marcados como «Borrado» y las instantáneas indicadas se eliminan.';
$_LANG['pvebill_reinstall_now'] = 'Reinstalar ahora';
$_LANG['pvebill_reinstall_tick'] = 'Marque la casilla para confirmar que los datos marcados como «Borrado» se eliminarán.';
$_LANG['pvebill_password_short'] = 'Elija una contraseña de root de al menos 8 caracteres.';
$_LANG['pvebill_reinstall_done'] = 'La reinstalación ha terminado. Inicie sesión con la nueva contraseña de root.';
$_LANG['pvebill_reinstall_pending'] = 'pvebill todavía está preparando la vista previa. Vuelva a cargar esta página en un momento.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'La reinstalación se interrumpió después de borrar el sistema anterior. Introduzca una contraseña de root para terminarla: pvebill nunca la guarda.';
$_LANG['pvebill_send_password'] = 'Terminar la reinstalación';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'Es temporal: vuelva a intentar la acción más tarde.';
$_LANG['pvebill_http_status'] = 'HTTP {status} de pvebill';
$_LANG['pvebill_in_progress'] = 'En curso: pvebill todavía está trabajando en esta acción ({what}){ref}. Repita la acción dentro de un minuto para obtener el resultado; repetirla es seguro y no vuelve a hacer el trabajo.';
$_LANG['pvebill_operation'] = 'operación';
$_LANG['pvebill_stage'] = 'fase';
$_LANG['pvebill_unreachable'] = 'No se pudo contactar con pvebill ({error}). Reintentar es seguro: pvebill reconoce el reintento por su Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'La acción «{what}» ha fallado:';
$_LANG['pvebill_op_reconcile'] = 'La acción «{what}» se detuvo a medias y un administrador debe conciliarla en pvebill:';

$_LANG['pvebill_no_restore_preview'] = 'No hay ninguna vista previa de restauración que aplicar; vuelva a elegir la copia de seguridad.';
$_LANG['pvebill_restore_not_applicable'] = 'Esta vista previa de restauración está {state} y no se puede aplicar; vuelva a elegir la copia de seguridad.';
$_LANG['pvebill_no_reinstall_preview'] = 'No hay ninguna vista previa de reinstalación que aplicar; pida primero una vista previa.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Esta vista previa de reinstalación está {state} y no se puede aplicar; pida una nueva vista previa.';
$_LANG['pvebill_reinstall_ended'] = 'La reinstalación terminó en el estado {state} (intención {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Todavía no hay vista previa de reinstalación; pulse primero «Reinstalación: vista previa».';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Reinstalación: vista previa';
$_LANG['pvebill_admin_reinstall_apply'] = 'Reinstalación: aplicar';
$_LANG['pvebill_admin_tab_console'] = 'Consola de pvebill';
$_LANG['pvebill_admin_tab_reinstall'] = 'Reinstalación de pvebill';
$_LANG['pvebill_admin_no_preview'] = 'Todavía no hay vista previa de reinstalación.';
$_LANG['pvebill_admin_state'] = 'Estado';
$_LANG['pvebill_admin_console_new_tab'] = 'La consola se abre en una pestaña nueva desde el enlace «Abrir consola» de la pestaña del servicio.';
$_LANG['pvebill_admin_console_here'] = 'La consola no se ha podido abrir aquí; use el enlace «Abrir consola» de la pestaña del servicio.';
$_LANG['pvebill_admin_cfg_plan'] = 'Plan';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'Código del plan de pvebill (GET /v1/plans), p. ej. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Tipo de invitado';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Fijado por el producto o elegido por el cliente al pedir';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'El único tipo del plan';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Elección del cliente (opción configurable «{option}»)';
$_LANG['pvebill_admin_cfg_os'] = 'Sistema operativo';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Sistema por defecto del catálogo del plan; una opción configurable «{option}» lo sustituye';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'No se ha indicado una contraseña nueva.';
$_LANG['pvebill_metric_traffic_in'] = 'Tráfico entrante';
$_LANG['pvebill_metric_traffic_out'] = 'Tráfico saliente';
$_LANG['pvebill_metric_backup_storage'] = 'Almacenamiento de copias de seguridad';
$_LANG['pvebill_metric_memory_avg'] = 'Memoria (media)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (media)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'DNS inverso';
$_LANG['pvebill_ip_prefix'] = 'Prefijo IPv6';
$_LANG['pvebill_rdns_address'] = 'Dirección';
$_LANG['pvebill_rdns_hostname'] = 'Nombre DNS inverso';
$_LANG['pvebill_rdns_status'] = 'Estado';
$_LANG['pvebill_rdns_save'] = 'Guardar';
$_LANG['pvebill_rdns_saved'] = 'El nombre DNS inverso se ha guardado y publicado.';
$_LANG['pvebill_rdns_pending'] = 'El nombre DNS inverso se ha guardado; se publicará en cuanto responda el servidor DNS.';
$_LANG['pvebill_rdns_other_address'] = 'Otra dirección de su prefijo IPv6 {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Este servicio no tiene dirección IP.';
$_LANG['pvebill_rdns_status_pending'] = 'Esperando al servidor DNS';
$_LANG['pvebill_rdns_status_synced'] = 'Publicado';
$_LANG['pvebill_rdns_status_failed'] = 'Rechazado por el servidor DNS';
$_LANG['pvebill_rdns_not_set'] = 'Sin definir';
$_LANG['pvebill_rdns_hostname_help'] = 'Un nombre de host completo, como mail.example.com (sin punto final).';
$_LANG['pvebill_admin_tab_rdns'] = 'DNS inverso de pvebill';
$_LANG['pvebill_admin_tab_prefix'] = 'Prefijo IPv6 de pvebill';
