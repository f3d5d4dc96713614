{* pvebill service overview: status and live monitoring; "Not available" where pvebill has no figure;
   the usage graphs, inline SVG that the module built with every text escaped. *}
{if $pvebill.error}
    <div class="alert alert-danger">{$pvebill.error|escape}</div>
{else}
    {* Only what the plan offers the guest type; refused for now: disabled, with the reason. *}
    <p class="pvebill-actions">
        {foreach from=$pvebill.buttons item=b}
            {if $b.reason !== null}
                <button type="button" class="btn btn-default" disabled="disabled" title="{$b.reason|escape}">{$b.label|escape}</button>
                <small class="text-muted">{$b.reason|escape}</small>
            {else}
                <a class="btn btn-default" href="{$b.href|escape}"{if $b.new_tab} target="_blank" rel="noopener"{/if}>{$b.label|escape}</a>
            {/if}
        {/foreach}
    </p>
    <h3>Service</h3>
    <table class="table table-striped">
        {foreach from=$pvebill.service key=label item=value}
            <tr><th>{$label|escape}</th><td>{$value|escape}</td></tr>
        {/foreach}
    </table>
    <h3>Monitoring</h3>
    <table class="table table-striped">
        {foreach from=$pvebill.monitoring key=label item=value}
            <tr><th>{$label|escape}</th><td>{$value|escape}</td></tr>
        {/foreach}
    </table>
    <h3>Usage</h3>
    {$pvebill.graphs nofilter}
{/if}
