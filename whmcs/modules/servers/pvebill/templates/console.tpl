{* pvebill "Open console": shown only when the console was not opened; the reason is translated. *}
<div class="alert alert-danger">{$pvebill.error|escape}</div>
<a class="btn btn-outline-secondary" href="clientarea.php?action=productdetails&amp;id={$serviceid|escape}">{$_lang.pvebill_overview|escape}</a>
