{* pvebill reinstall: phase 1 shows what happens to every mount; phase 2 confirms with a root password
   in a form that carries WHMCS's CSRF token. *}
<h2>{$_lang.pvebill_reinstall|escape}</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if $intent && !$done}
    <table class="table table-sm">
        <tr><th>{$_lang.pvebill_os|escape}</th><td><strong>{$intent.os|escape}</strong></td></tr>
        <tr><th>{$_lang.pvebill_rootfs_now|escape}</th><td>{$intent.rootfs_current|escape}</td></tr>
        <tr><th>{$_lang.pvebill_rootfs_after|escape}</th><td>{$intent.rootfs_planned|escape}</td></tr>
    </table>
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
    {if $intent.state == 'awaiting_password'}
        {* The reinstall was taken over after its destroy and waits for the root password (R58). *}
        <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid|escape}&amp;modop=custom&amp;a=Reinstall">
            <input type="hidden" name="token" value="{$token|escape}">
            <input type="hidden" name="step" value="confirm">
            <input type="hidden" name="confirm" value="1">
            <input type="hidden" name="intent_id" value="{$intent.id|escape}">
            <div class="form-group">
                <label for="pvebill-root-password">{$_lang.pvebill_root_password|escape}</label>
                <input type="password" class="form-control" id="pvebill-root-password" name="root_password" minlength="8" required>
            </div>
            <button type="submit" class="btn btn-primary">{$_lang.pvebill_send_password|escape}</button>
        </form>
    {/if}
    {if $intent.state == 'preview_ready' && !$blockers}
        <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid|escape}&amp;modop=custom&amp;a=Reinstall">
            <input type="hidden" name="token" value="{$token|escape}">
            <input type="hidden" name="step" value="confirm">
            <input type="hidden" name="intent_id" value="{$intent.id|escape}">
            <div class="form-group">
                <label for="pvebill-root-password">{$_lang.pvebill_root_password|escape}</label>
                <input type="password" class="form-control" id="pvebill-root-password" name="root_password" minlength="8" required>
            </div>
            <div class="form-check mb-3">
                <input type="checkbox" class="form-check-input" id="pvebill-reinstall-confirm" name="confirm" value="1" required>
                <label class="form-check-label" for="pvebill-reinstall-confirm">{if $snapshots}{$_lang.pvebill_reinstall_confirm_snapshots|escape}{else}{$_lang.pvebill_reinstall_confirm|escape}{/if}</label>
            </div>
            <button type="submit" class="btn btn-danger">{$_lang.pvebill_reinstall_now|escape}</button>
        </form>
    {/if}
{/if}
