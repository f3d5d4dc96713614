{* pvebill backups: the service's backups, oldest first; back up now; delete one (R42); restore one
   after a confirmation step that shows what the restore replaces (R43). *}
<h2>Backups</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if $restore}
    <h3>Restore {$restore.backup_id|escape}</h3>
    <p>The server is replaced by this backup. Everything written since the backup is lost.</p>
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
    {if $restore.state == 'preview_ready' && !$blockers}
        <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid}&amp;modop=custom&amp;a=Backups">
            <input type="hidden" name="token" value="{$token}">
            <input type="hidden" name="step" value="restore_confirm">
            <input type="hidden" name="intent_id" value="{$restore.id|escape}">
            <div class="checkbox">
                <label><input type="checkbox" name="confirm" value="1" required>
                    I understand that the data marked "Erased"{if $snapshots} and the snapshots listed are{else} is{/if} replaced by the backup.</label>
            </div>
            <button type="submit" class="btn btn-danger">Restore now</button>
        </form>
    {/if}
{/if}
<form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid}&amp;modop=custom&amp;a=Backups">
    <input type="hidden" name="token" value="{$token}">
    <input type="hidden" name="step" value="create">
    <button type="submit" class="btn btn-primary">Back up now</button>
</form>
<table class="table">
    <tr><th>Created</th><th>Size</th><th>Protected</th><th></th></tr>
    {foreach from=$backups item=b}
        <tr>
            <td>{$b.created|escape}</td><td>{$b.size|escape}</td><td>{if $b.protected}Yes{else}No{/if}</td>
            <td>
                <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid}&amp;modop=custom&amp;a=Backups">
                    <input type="hidden" name="token" value="{$token}">
                    <input type="hidden" name="step" value="restore">
                    <input type="hidden" name="backup_id" value="{$b.id|escape}">
                    <button type="submit" class="btn btn-warning btn-sm">Restore…</button>
                </form>
                {if !$b.protected}
                    <form method="post" action="clientarea.php?action=productdetails&amp;id={$serviceid}&amp;modop=custom&amp;a=Backups">
                        <input type="hidden" name="token" value="{$token}">
                        <input type="hidden" name="step" value="delete">
                        <input type="hidden" name="backup_id" value="{$b.id|escape}">
                        <button type="submit" class="btn btn-danger btn-sm">Delete</button>
                    </form>
                {/if}
            </td>
        </tr>
    {foreachelse}
        <tr><td colspan="4">No backups yet.</td></tr>
    {/foreach}
</table>
