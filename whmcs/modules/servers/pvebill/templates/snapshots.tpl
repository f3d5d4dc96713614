{* pvebill snapshots: the list, a form to take one, delete, and a rollback confirmed by typing the name. *}
<h2>Snapshots</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{assign var=action value="clientarea.php?action=productdetails&amp;id=`$serviceid`&amp;modop=custom&amp;a=Snapshots"}
<p>{$snapshots|@count} of {$max|escape} snapshots used.</p>
<table class="table">
    <tr><th>Name</th><th>Description</th><th>Taken</th><th></th></tr>
    {foreach from=$snapshots item=s}
        <tr>
            <td>{$s.name|escape}</td><td>{$s.description|escape}</td><td>{$s.created_at|escape}</td>
            <td>
                <form method="post" action="{$action}" class="form-inline">
                    <input type="hidden" name="token" value="{$token}">
                    <input type="hidden" name="step" value="delete">
                    <input type="hidden" name="name" value="{$s.name|escape}">
                    <button type="submit" class="btn btn-default">Delete</button>
                </form>
                <form method="post" action="{$action}" class="form-inline">
                    <input type="hidden" name="token" value="{$token}">
                    <input type="hidden" name="step" value="rollback">
                    <input type="hidden" name="name" value="{$s.name|escape}">
                    <label>Everything written since this snapshot is lost. Type <strong>{$s.name|escape}</strong> to confirm:
                        <input type="text" class="form-control" name="confirm" required></label>
                    <button type="submit" class="btn btn-danger">Roll back</button>
                </form>
            </td>
        </tr>
    {/foreach}
</table>
{if $max > 0}
    <form method="post" action="{$action}">
        <input type="hidden" name="token" value="{$token}">
        <input type="hidden" name="step" value="create">
        <div class="form-group">
            <label for="pvebill-snapshot-name">Name (a letter, then letters, digits, "_" or "-"; up to 40)</label>
            <input type="text" class="form-control" id="pvebill-snapshot-name" name="name" maxlength="40" pattern="[A-Za-z][A-Za-z0-9_-]+" required>
        </div>
        <div class="form-group">
            <label for="pvebill-snapshot-description">Description</label>
            <input type="text" class="form-control" id="pvebill-snapshot-description" name="description" maxlength="255">
        </div>
        <button type="submit" class="btn btn-primary">Take a snapshot</button>
    </form>
{/if}
