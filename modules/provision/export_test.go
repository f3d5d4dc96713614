package provision

import "pvebill/modules/operation"

// BlockerShrink is the blocker code of a plan change that would shrink the disk.
const BlockerShrink = string(operation.RootfsWouldShrink)
