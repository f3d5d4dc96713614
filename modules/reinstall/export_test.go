package reinstall

import "pvebill/modules/operation"

// BlockerCodes lists the nine codes in the order Check reports them.
var BlockerCodes = operation.BlockerCodes
