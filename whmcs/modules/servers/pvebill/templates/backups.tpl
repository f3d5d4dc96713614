{* pvebill backups: the service's backups, oldest first; back up now; delete one (R42). *}
<h2>Backups</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
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
