{* pvebill service overview: status and live monitoring; "Not available" where pvebill has no figure;
   the usage graphs, inline SVG that the module built with every text escaped. Texts: $_lang (the
   module's language files); buttons: Bootstrap 4 (WHMCS's "Twenty-One" theme). *}
{if $pvebill.error}
    <div class="alert alert-danger">{$pvebill.error|escape}</div>
{else}
    {* Only what the plan offers the guest type; refused for now: disabled, with the reason. What
       changes something is a form posted with WHMCS's CSRF token, never a link. *}
    <div class="pvebill-actions mb-3">
        {foreach from=$pvebill.buttons item=b}
            {if $b.reason !== null}
                <button type="button" class="{$b.class|escape}" disabled="disabled" title="{$b.reason|escape}">{$b.label|escape}</button>
                <small class="text-muted">{$b.reason|escape}</small>
            {elseif $b.method == 'post'}
                <form method="post" action="{$b.href|escape}" class="d-inline"{if $b.new_tab} target="_blank"{/if}>
                    <input type="hidden" name="token" value="{$token|escape}">
                    {if $b.power}<input type="hidden" name="power" value="{$b.power|escape}">{/if}
                    <button type="submit" class="{$b.class|escape}">{$b.label|escape}</button>
                </form>
            {else}
                <a class="{$b.class|escape}" href="{$b.href|escape}">{$b.label|escape}</a>
            {/if}
        {/foreach}
    </div>
    <h3>{$_lang.pvebill_service|escape}</h3>
    <table class="table table-striped">
        {foreach from=$pvebill.service item=row}
            <tr><th>{$row.label|escape}</th><td>{$row.value|escape}</td></tr>
        {/foreach}
    </table>
    <h3>{$_lang.pvebill_monitoring|escape}</h3>
    <table class="table table-striped">
        {foreach from=$pvebill.monitoring item=row}
            <tr><th>{$row.label|escape}</th><td>{$row.value|escape}</td></tr>
        {/foreach}
    </table>
    <h3>{$_lang.pvebill_usage|escape}</h3>
    {$pvebill.graphs nofilter}
{/if}
