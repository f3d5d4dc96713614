<?php

// pvebill module texts: Portuguese (Portugal; WHMCS's portuguese-br reads it too). {name} marks a
// value filled in.

if (!defined('WHMCS') && PHP_SAPI !== 'cli') {
    die('This file cannot be accessed directly');
}

// Overview: buttons and headings.
$_LANG['pvebill_start'] = 'Iniciar';
$_LANG['pvebill_stop'] = 'Parar';
$_LANG['pvebill_shutdown'] = 'Encerrar';
$_LANG['pvebill_reboot'] = 'Reiniciar';
$_LANG['pvebill_console'] = 'Abrir consola';
$_LANG['pvebill_reinstall'] = 'Reinstalar';
$_LANG['pvebill_snapshots'] = 'Snapshots';
$_LANG['pvebill_backups'] = 'Cópias de segurança';
$_LANG['pvebill_service'] = 'Serviço';
$_LANG['pvebill_monitoring'] = 'Monitorização';
$_LANG['pvebill_usage'] = 'Utilização';
$_LANG['pvebill_overview'] = 'Visão geral';

// Service and monitoring.
$_LANG['pvebill_status'] = 'Estado';
$_LANG['pvebill_power'] = 'Energia';
$_LANG['pvebill_hostname'] = 'Nome do anfitrião';
$_LANG['pvebill_guest_type'] = 'Tipo de convidado';
$_LANG['pvebill_plan'] = 'Plano';
$_LANG['pvebill_ip_addresses'] = 'Endereços IP';
$_LANG['pvebill_vm'] = 'Máquina virtual';
$_LANG['pvebill_container'] = 'Contentor';
$_LANG['pvebill_state_provisioning'] = 'Em preparação';
$_LANG['pvebill_state_active'] = 'Ativo';
$_LANG['pvebill_state_suspended'] = 'Suspenso';
$_LANG['pvebill_state_limited'] = 'Limitado';
$_LANG['pvebill_state_terminated'] = 'Cancelado';
$_LANG['pvebill_state_needs_reconciliation'] = 'À espera de um administrador';
$_LANG['pvebill_state_failed'] = 'Falhou';
$_LANG['pvebill_power_running'] = 'Em execução';
$_LANG['pvebill_power_stopped'] = 'Parado';
$_LANG['pvebill_power_paused'] = 'Em pausa';
$_LANG['pvebill_cpu'] = 'CPU';
$_LANG['pvebill_memory'] = 'Memória';
$_LANG['pvebill_disk'] = 'Disco';
$_LANG['pvebill_swap'] = 'Swap';
$_LANG['pvebill_network'] = 'Rede';
$_LANG['pvebill_network_in'] = 'Rede de entrada';
$_LANG['pvebill_network_out'] = 'Rede de saída';
$_LANG['pvebill_received'] = 'Recebido';
$_LANG['pvebill_sent'] = 'Enviado';
$_LANG['pvebill_uptime'] = 'Tempo de atividade';
$_LANG['pvebill_guest_agent'] = 'Agente do convidado';
$_LANG['pvebill_not_available'] = 'Não disponível';
$_LANG['pvebill_yes'] = 'Sim';
$_LANG['pvebill_no'] = 'Não';
$_LANG['pvebill_used_of'] = '{used} de {max}';
$_LANG['pvebill_range_day'] = 'Último dia';
$_LANG['pvebill_range_week'] = 'Última semana';
$_LANG['pvebill_range_month'] = 'Último mês';
$_LANG['pvebill_plan_limit'] = 'Limite do plano: {limit}';
$_LANG['pvebill_no_data'] = 'Sem dados para este período';

// Forms.
$_LANG['pvebill_token_invalid'] = 'Este formulário expirou ou não veio desta página, por isso nada foi feito. Recarregue a página e tente novamente.';
$_LANG['pvebill_mount'] = 'Ponto de montagem';
$_LANG['pvebill_path'] = 'Caminho';
$_LANG['pvebill_volume'] = 'Volume';
$_LANG['pvebill_data'] = 'Dados';
$_LANG['pvebill_afterwards'] = 'Depois';
$_LANG['pvebill_data_erased'] = 'Apagado: tudo o que está neste volume é eliminado';
$_LANG['pvebill_data_untouched'] = 'Intacto: os dados ficam onde estão';
$_LANG['pvebill_data_excluded'] = 'Excluído: pertence a outro convidado e não é alterado';
$_LANG['pvebill_mount_recreated'] = 'Recriado vazio';
$_LANG['pvebill_mount_removed'] = 'Deixa de estar montado';
$_LANG['pvebill_mount_kept'] = 'Montado de novo';
$_LANG['pvebill_snapshots_deleted'] = 'Estes snapshots são eliminados com o servidor:';
$_LANG['pvebill_delete'] = 'Eliminar';

// Backups.
$_LANG['pvebill_backup_now'] = 'Fazer cópia agora';
$_LANG['pvebill_created'] = 'Criada';
$_LANG['pvebill_size'] = 'Tamanho';
$_LANG['pvebill_protected'] = 'Protegida';
$_LANG['pvebill_restore'] = 'Restaurar…';
$_LANG['pvebill_restore_title'] = 'Restaurar {backup}';
$_LANG['pvebill_restore_warning'] = 'O servidor é substituído por esta cópia de segurança. Tudo o que foi escrito desde a cópia perde-se.';
$_LANG['pvebill_restore_confirm'] = 'Compreendo que os dados marcados como «Apagado» são substituídos pela cópia de segurança.';
$_LANG['pvebill_restore_confirm_snapshots'] = 'Compreendo que os dados marcados como «Apagado» e os snapshots indicados são substituídos pela cópia de segurança.';
$_LANG['pvebill_restore_now'] = 'Restaurar agora';
$_LANG['pvebill_no_backups'] = 'Ainda não há cópias de segurança.';
$_LANG['pvebill_backup_created'] = 'A cópia de segurança foi feita.';
$_LANG['pvebill_backup_deleted'] = 'A cópia de segurança foi eliminada.';
$_LANG['pvebill_backup_restored'] = 'O servidor foi restaurado a partir da cópia de segurança.';
$_LANG['pvebill_restore_tick'] = 'Assinale a caixa para confirmar que os dados marcados como «Apagado» serão substituídos pela cópia de segurança.';
$_LANG['pvebill_restore_pending'] = 'O pvebill ainda está a preparar a pré-visualização do restauro. Recarregue esta página dentro de momentos.';
$_LANG['pvebill_no_backup_chosen'] = 'Não foi escolhida nenhuma cópia de segurança.';

// Snapshots.
$_LANG['pvebill_snapshots_used'] = '{count} de {max} snapshots utilizados.';
$_LANG['pvebill_name'] = 'Nome';
$_LANG['pvebill_description'] = 'Descrição';
$_LANG['pvebill_taken'] = 'Criado';
$_LANG['pvebill_rollback_warning'] = 'Tudo o que foi escrito desde este snapshot perde-se. Para confirmar, escreva o nome dele:';
$_LANG['pvebill_rollback'] = 'Reverter';
$_LANG['pvebill_snapshot_name_help'] = 'Nome (uma letra, depois letras, algarismos, «_» ou «-»; no máximo 40)';
$_LANG['pvebill_snapshot_take'] = 'Criar um snapshot';
$_LANG['pvebill_snapshot_taken'] = 'O snapshot foi criado.';
$_LANG['pvebill_snapshot_deleted'] = 'O snapshot foi eliminado.';
$_LANG['pvebill_snapshot_rolled_back'] = 'O servidor foi revertido para o snapshot.';
$_LANG['pvebill_rollback_mistyped'] = 'Escreva exatamente o nome do snapshot para confirmar a reversão.';

// Reinstall.
$_LANG['pvebill_os'] = 'Sistema operativo';
$_LANG['pvebill_rootfs_now'] = 'Disco raiz atual';
$_LANG['pvebill_rootfs_after'] = 'Disco raiz após a reinstalação';
$_LANG['pvebill_root_password'] = 'Nova palavra-passe de root';
$_LANG['pvebill_reinstall_confirm'] = 'Compreendo que os dados marcados como «Apagado» são eliminados.';
$_LANG['pvebill_reinstall_confirm_snapshots'] = 'Compreendo que os dados marcados como «Apagado» e os snapshots indicados são eliminados.';
$_LANG['pvebill_reinstall_now'] = 'Reinstalar agora';
$_LANG['pvebill_reinstall_tick'] = 'Assinale a caixa para confirmar que os dados marcados como «Apagado» serão eliminados.';
$_LANG['pvebill_password_short'] = 'Escolha uma palavra-passe de root com pelo menos 8 caracteres.';
$_LANG['pvebill_reinstall_done'] = 'A reinstalação terminou. Inicie sessão com a nova palavra-passe de root.';
$_LANG['pvebill_reinstall_pending'] = 'O pvebill ainda está a preparar a pré-visualização. Recarregue esta página dentro de momentos.';
$_LANG['pvebill_reinstall_awaiting_password'] = 'A reinstalação foi interrompida depois de o sistema antigo ter sido apagado. Introduza uma palavra-passe de root para a concluir: o pvebill nunca a guarda.';
$_LANG['pvebill_send_password'] = 'Concluir a reinstalação';

// Outcomes of an action.
$_LANG['pvebill_temporary'] = 'É temporário: tente a ação novamente mais tarde.';
$_LANG['pvebill_http_status'] = 'HTTP {status} do pvebill';
$_LANG['pvebill_in_progress'] = 'Em curso: o pvebill ainda está a trabalhar nesta ação ({what}){ref}. Repita a ação dentro de um minuto para obter o resultado; repetir é seguro e não refaz o trabalho.';
$_LANG['pvebill_operation'] = 'operação';
$_LANG['pvebill_stage'] = 'fase';
$_LANG['pvebill_unreachable'] = 'Não foi possível contactar o pvebill ({error}). Tentar novamente é seguro: o pvebill reconhece a nova tentativa pela sua Idempotency-Key.';
$_LANG['pvebill_op_failed'] = 'A ação «{what}» falhou:';
$_LANG['pvebill_op_reconcile'] = 'A ação «{what}» parou a meio e um administrador tem de a reconciliar no pvebill:';

$_LANG['pvebill_no_restore_preview'] = 'Não há nenhuma pré-visualização de restauro para aplicar; escolha novamente a cópia de segurança.';
$_LANG['pvebill_restore_not_applicable'] = 'Esta pré-visualização de restauro está {state} e não pode ser aplicada; escolha novamente a cópia de segurança.';
$_LANG['pvebill_no_reinstall_preview'] = 'Não há nenhuma pré-visualização de reinstalação para aplicar; peça primeiro uma pré-visualização.';
$_LANG['pvebill_reinstall_not_applicable'] = 'Esta pré-visualização de reinstalação está {state} e não pode ser aplicada; peça uma nova pré-visualização.';
$_LANG['pvebill_reinstall_ended'] = 'A reinstalação terminou no estado {state} (intenção {id}).';
$_LANG['pvebill_admin_no_preview_press'] = 'Ainda não há pré-visualização de reinstalação; prima primeiro «Reinstalação: pré-visualizar».';

// Admin area.
$_LANG['pvebill_admin_reinstall_preview'] = 'Reinstalação: pré-visualizar';
$_LANG['pvebill_admin_reinstall_apply'] = 'Reinstalação: aplicar';
$_LANG['pvebill_admin_tab_console'] = 'Consola do pvebill';
$_LANG['pvebill_admin_tab_reinstall'] = 'Reinstalação do pvebill';
$_LANG['pvebill_admin_no_preview'] = 'Ainda não há pré-visualização de reinstalação.';
$_LANG['pvebill_admin_state'] = 'Estado';
$_LANG['pvebill_admin_console_new_tab'] = 'A consola abre-se num novo separador a partir da ligação «Abrir consola» no separador do serviço.';
$_LANG['pvebill_admin_console_here'] = 'Não foi possível abrir a consola aqui; use a ligação «Abrir consola» no separador do serviço.';
$_LANG['pvebill_admin_cfg_plan'] = 'Plano';
$_LANG['pvebill_admin_cfg_plan_desc'] = 'Código do plano do pvebill (GET /v1/plans), p. ex. ct-2g';
$_LANG['pvebill_admin_cfg_guest_type'] = 'Tipo de convidado';
$_LANG['pvebill_admin_cfg_guest_type_desc'] = 'Fixado pelo produto ou escolhido pelo cliente na encomenda';
$_LANG['pvebill_admin_cfg_guest_plan'] = 'O único tipo do plano';
$_LANG['pvebill_admin_cfg_guest_option'] = 'Escolha do cliente (opção configurável «{option}»)';
$_LANG['pvebill_admin_cfg_os'] = 'Sistema operativo';
$_LANG['pvebill_admin_cfg_os_desc'] = 'Sistema predefinido do catálogo do plano; uma opção configurável «{option}» substitui-o';

// Change password; usage billing (the metrics' names, in the admin's language).
$_LANG['pvebill_password_missing'] = 'Não foi indicada uma nova palavra-passe.';
$_LANG['pvebill_metric_traffic_in'] = 'Tráfego de entrada';
$_LANG['pvebill_metric_traffic_out'] = 'Tráfego de saída';
$_LANG['pvebill_metric_backup_storage'] = 'Armazenamento de cópias de segurança';
$_LANG['pvebill_metric_memory_avg'] = 'Memória (média)';
$_LANG['pvebill_metric_swap_avg'] = 'Swap (média)';

// Reverse DNS (R55).
$_LANG['pvebill_reversedns'] = 'DNS reverso';
$_LANG['pvebill_ip_prefix'] = 'Prefixo IPv6';
$_LANG['pvebill_rdns_address'] = 'Endereço';
$_LANG['pvebill_rdns_hostname'] = 'Nome de DNS reverso';
$_LANG['pvebill_rdns_status'] = 'Estado';
$_LANG['pvebill_rdns_save'] = 'Guardar';
$_LANG['pvebill_rdns_saved'] = 'O nome de DNS reverso foi guardado e publicado.';
$_LANG['pvebill_rdns_pending'] = 'O nome de DNS reverso foi guardado; será publicado assim que o servidor DNS responder.';
$_LANG['pvebill_rdns_other_address'] = 'Outro endereço do seu prefixo IPv6 {prefix}:';
$_LANG['pvebill_rdns_no_addresses'] = 'Este serviço não tem endereço IP.';
$_LANG['pvebill_rdns_status_pending'] = 'A aguardar o servidor DNS';
$_LANG['pvebill_rdns_status_synced'] = 'Publicado';
$_LANG['pvebill_rdns_status_failed'] = 'Recusado pelo servidor DNS';
$_LANG['pvebill_rdns_not_set'] = 'Não definido';
$_LANG['pvebill_rdns_hostname_help'] = 'Um nome de anfitrião completo, como mail.example.com (sem ponto final).';
$_LANG['pvebill_admin_tab_rdns'] = 'DNS reverso pvebill';
$_LANG['pvebill_admin_tab_prefix'] = 'Prefixo IPv6 pvebill';
