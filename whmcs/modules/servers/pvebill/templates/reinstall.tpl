{* pvebill reinstall: phase 1 shows what happens to every mount; phase 2 confirms with a root password. *}
<h2>Reinstall</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if $intent && !$done}
    <p>Operating system: <strong>{$intent.os|escape}</strong>.
       Root disk now {$intent.rootfs_current|escape}, after the reinstall {$intent.rootfs_planned|escape}.</p>
    <table class="table">
        <tr><th>Mount</th><th>Path</th><th>Volume</th><th>Data</th><th>Afterwards</th></tr>
        {foreach from=$mounts item=m}
            <tr class="{if $m.data == 'erased'}danger{/if}">
                <td>{$m.key|escape}</td><td>{$m.path|escape}</td><td>{$m.volume|escape}</td>
                <td>{$m.data_label|escape}</td><td>{$m.mount_after_label|escape}</td>
            </tr>
        {/foreach}
    </table>
    {if $snapshots}
        <div class="alert alert-danger">These snapshots are deleted with the server:
            {foreach from=$snapshots item=sn name=snaps}<strong>{$sn|escape}</strong>{if !$smarty.foreach.snaps.last}, {/if}{/foreach}</div>
    {/if}
    {foreach from=$blockers item=b}<div class="alert alert-warning">{$b|escape}</div>{/foreach}
    {if $intent.state == 'preview_ready' && !$blockers}
        <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid}&amp;modop=custom&amp;a=Reinstall">
            <input type="hidden" name="token" value="{$token}">
            <input type="hidden" name="step" value="confirm">
            <input type="hidden" name="intent_id" value="{$intent.id|escape}">
            <div class="form-group">
                <label for="pvebill-root-password">New root password</label>
                <input type="password" class="form-control" id="pvebill-root-password" name="root_password" minlength="8" required>
            </div>
            <div class="checkbox">
                <label><input type="checkbox" name="confirm" value="1" required>
                    I understand that the data marked "Erased"{if $snapshots} and the snapshots listed are{else} is{/if} deleted.</label>
            </div>
            <button type="submit" class="btn btn-danger">Reinstall now</button>
        </form>
    {/if}
{/if}
