{* pvebill "Open console": shown only when pvebill refused the console; the reason is translated. *}
<div class="alert alert-danger">{$pvebill.error|escape}</div>
