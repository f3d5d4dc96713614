{* pvebill backups: the service's backups, oldest first; back up now; delete one (R42); restore one
   after a confirmation step that shows what the restore replaces (R43). Every form carries WHMCS's
   CSRF token. *}
{assign var=action value="clientarea.php?action=productdetails&amp;id=`$serviceid`&amp;modop=custom&amp;a=Backups"}
<h2>{$_lang.pvebill_backups|escape}</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if !$refused}
{if $restore}
    <h3>{$restore.title|escape}</h3>
    <p>{$_lang.pvebill_restore_warning|escape}</p>
    <table class="table">
        <tr><th>{$_lang.pvebill_mount|escape}</th><th>{$_lang.pvebill_path|escape}</th><th>{$_lang.pvebill_volume|escape}</th><th>{$_lang.pvebill_data|escape}</th><th>{$_lang.pvebill_afterwards|escape}</th></tr>
        {foreach from=$mounts item=m}
            <tr class="{if $m.data == 'erased'}table-danger{/if}">
                <td>{$m.key|escape}</td><td>{$m.path|escape}</td><td>{$m.volume|escape}</td>
                <td>{$m.data_label|escape}</td><td>{$m.mount_after_label|escape}</td>
            </tr>
        {/foreach}
    </table>
    {if $snapshots}
        <div class="alert alert-danger">{$_lang.pvebill_snapshots_deleted|escape}
            {foreach from=$snapshots item=sn name=snaps}<strong>{$sn|escape}</strong>{if !$smarty.foreach.snaps.last}, {/if}{/foreach}</div>
    {/if}
    {foreach from=$blockers item=b}<div class="alert alert-warning">{$b|escape}</div>{/foreach}
    {if $restore.state == 'preview_ready' && !$blockers}
        <form method="post" action="{$action}">
            <input type="hidden" name="token" value="{$token|escape}">
            <input type="hidden" name="step" value="restore_confirm">
            <input type="hidden" name="intent_id" value="{$restore.id|escape}">
            <div class="form-check mb-3">
                <input type="checkbox" class="form-check-input" id="pvebill-restore-confirm" name="confirm" value="1" required>
                <label class="form-check-label" for="pvebill-restore-confirm">{if $snapshots}{$_lang.pvebill_restore_confirm_snapshots|escape}{else}{$_lang.pvebill_restore_confirm|escape}{/if}</label>
            </div>
            <button type="submit" class="btn btn-danger">{$_lang.pvebill_restore_now|escape}</button>
        </form>
    {/if}
{/if}
<form method="post" action="{$action}" class="mb-3">
    <input type="hidden" name="token" value="{$token|escape}">
    <input type="hidden" name="step" value="create">
    <button type="submit" class="btn btn-primary">{$_lang.pvebill_backup_now|escape}</button>
</form>
<table class="table">
    <tr><th>{$_lang.pvebill_created|escape}</th><th>{$_lang.pvebill_size|escape}</th><th>{$_lang.pvebill_protected|escape}</th><th></th></tr>
    {foreach from=$backups item=b}
        <tr>
            <td>{$b.created|escape}</td><td>{$b.size|escape}</td><td>{if $b.protected}{$_lang.pvebill_yes|escape}{else}{$_lang.pvebill_no|escape}{/if}</td>
            <td>
                <form method="post" action="{$action}" class="d-inline">
                    <input type="hidden" name="token" value="{$token|escape}">
                    <input type="hidden" name="step" value="restore">
                    <input type="hidden" name="backup_id" value="{$b.id|escape}">
                    <button type="submit" class="btn btn-outline-secondary btn-sm">{$_lang.pvebill_restore|escape}</button>
                </form>
                {if !$b.protected}
                    <form method="post" action="{$action}" class="d-inline">
                        <input type="hidden" name="token" value="{$token|escape}">
                        <input type="hidden" name="step" value="delete">
                        <input type="hidden" name="backup_id" value="{$b.id|escape}">
                        <button type="submit" class="btn btn-outline-danger btn-sm">{$_lang.pvebill_delete|escape}</button>
                    </form>
                {/if}
            </td>
        </tr>
    {foreachelse}
        <tr><td colspan="4">{$_lang.pvebill_no_backups|escape}</td></tr>
    {/foreach}
</table>
{/if}
