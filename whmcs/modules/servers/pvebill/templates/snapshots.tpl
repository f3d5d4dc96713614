{* pvebill snapshots: the list, a form to take one, delete, and a rollback confirmed by typing the
   name. Times read like the backups' ("2026-01-31 02:00 UTC"); every form carries WHMCS's CSRF token. *}
<h2>{$_lang.pvebill_snapshots|escape}</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if !$refused}
{assign var=action value="clientarea.php?action=productdetails&amp;id=`$serviceid`&amp;modop=custom&amp;a=Snapshots"}
<p>{$used|escape}</p>
<table class="table">
    <tr><th>{$_lang.pvebill_name|escape}</th><th>{$_lang.pvebill_description|escape}</th><th>{$_lang.pvebill_taken|escape}</th><th></th></tr>
    {foreach from=$snapshots item=s}
        <tr>
            <td>{$s.name|escape}</td><td>{$s.description|escape}</td><td>{$s.taken|escape}</td>
            <td>
                <form method="post" action="{$action}" class="d-inline">
                    <input type="hidden" name="token" value="{$token|escape}">
                    <input type="hidden" name="step" value="delete">
                    <input type="hidden" name="name" value="{$s.name|escape}">
                    <button type="submit" class="btn btn-outline-danger btn-sm">{$_lang.pvebill_delete|escape}</button>
                </form>
                <form method="post" action="{$action}" class="form-inline mt-2">
                    <input type="hidden" name="token" value="{$token|escape}">
                    <input type="hidden" name="step" value="rollback">
                    <input type="hidden" name="name" value="{$s.name|escape}">
                    <label class="mr-2">{$_lang.pvebill_rollback_warning|escape}&nbsp;<strong>{$s.name|escape}</strong></label>
                    <input type="text" class="form-control form-control-sm mr-2" name="confirm" required>
                    <button type="submit" class="btn btn-danger btn-sm">{$_lang.pvebill_rollback|escape}</button>
                </form>
            </td>
        </tr>
    {/foreach}
</table>
{if $max > 0}
    <form method="post" action="{$action}">
        <input type="hidden" name="token" value="{$token|escape}">
        <input type="hidden" name="step" value="create">
        <div class="form-group">
            <label for="pvebill-snapshot-name">{$_lang.pvebill_snapshot_name_help|escape}</label>
            <input type="text" class="form-control" id="pvebill-snapshot-name" name="name" maxlength="40" pattern="[A-Za-z][A-Za-z0-9_-]+" required>
        </div>
        <div class="form-group">
            <label for="pvebill-snapshot-description">{$_lang.pvebill_description|escape}</label>
            <input type="text" class="form-control" id="pvebill-snapshot-description" name="description" maxlength="255">
        </div>
        <button type="submit" class="btn btn-primary">{$_lang.pvebill_snapshot_take|escape}</button>
    </form>
{/if}
{/if}
