{* pvebill reverse DNS (R55): each address of the service with its name, where the name stands
   and a form to set it; a form for another address of the IPv6 prefix. Every form carries
   WHMCS's CSRF token. *}
<h2>{$_lang.pvebill_reversedns|escape}</h2>
{if $error}<div class="alert alert-danger">{$error|escape}</div>{/if}
{if $message}<div class="alert alert-info">{$message|escape}</div>{/if}
{if !$refused}
{assign var=action value="clientarea.php?action=productdetails&amp;id=`$serviceid`&amp;modop=custom&amp;a=ReverseDNS"}
{if $prefix}<p>{$_lang.pvebill_ip_prefix|escape}: <strong>{$prefix|escape}</strong></p>{/if}
<p>{$_lang.pvebill_rdns_hostname_help|escape}</p>
{if $rows}
<table class="table">
    <tr><th>{$_lang.pvebill_rdns_address|escape}</th><th>{$_lang.pvebill_rdns_hostname|escape}</th><th>{$_lang.pvebill_rdns_status|escape}</th></tr>
    {foreach from=$rows item=r}
        <tr>
            <td>{$r.address|escape}</td>
            <td>
                <form method="post" action="{$action}" class="form-inline">
                    <input type="hidden" name="token" value="{$token|escape}">
                    <input type="hidden" name="step" value="set">
                    <input type="hidden" name="address" value="{$r.address|escape}">
                    <input type="text" class="form-control form-control-sm mr-2" name="hostname" value="{$r.hostname|escape}" maxlength="253" required>
                    <button type="submit" class="btn btn-primary btn-sm">{$_lang.pvebill_rdns_save|escape}</button>
                </form>
            </td>
            <td>{$r.status|escape}</td>
        </tr>
    {/foreach}
</table>
{else}
<p>{$_lang.pvebill_rdns_no_addresses|escape}</p>
{/if}
{if $prefix}
    <form method="post" action="{$action}">
        <input type="hidden" name="token" value="{$token|escape}">
        <input type="hidden" name="step" value="set">
        <p>{$other|escape}</p>
        <div class="form-group">
            <label for="pvebill-rdns-address">{$_lang.pvebill_rdns_address|escape}</label>
            <input type="text" class="form-control" id="pvebill-rdns-address" name="address" maxlength="39" required>
        </div>
        <div class="form-group">
            <label for="pvebill-rdns-hostname">{$_lang.pvebill_rdns_hostname|escape}</label>
            <input type="text" class="form-control" id="pvebill-rdns-hostname" name="hostname" maxlength="253" required>
        </div>
        <button type="submit" class="btn btn-primary">{$_lang.pvebill_rdns_save|escape}</button>
    </form>
{/if}
{/if}
