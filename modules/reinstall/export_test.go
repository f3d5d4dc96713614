package reinstall

import "pvebill/modules/operation"

// BlockerCodes lists the nine codes in the order Check reports them.
var BlockerCodes = operation.BlockerCodes

// Offered reports whether this version can produce a label. Preserving a volume across a
// destroy means detaching it, destroying without collecting unreferenced disks and attaching it
// again: a failure in the middle step leaves a volume nobody owns. That is separate work with its
// own clean-up loop, so Preserved is not offered.
func Offered(l DataLabel) bool {
	switch l {
	case Erased, Excluded, Untouched, Unknown:
		return true
	}
	return false
}

// DataLabels is the whole vocabulary, in the order the documentation lists it.
var DataLabels = []DataLabel{Erased, Excluded, Untouched, Unknown, Preserved}
