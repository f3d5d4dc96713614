{* pvebill service overview: status and live monitoring; "Not available" where pvebill has no figure;
   the usage graphs, inline SVG that the module built with every text escaped. *}
{if $pvebill.error}
    <div class="alert alert-danger">{$pvebill.error|escape}</div>
{else}
    <p><a class="btn btn-default" href="{$pvebill.console_link|escape}" target="_blank" rel="noopener">Open console</a></p>
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
