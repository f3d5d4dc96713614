package usage

// SetRollupFault makes r call f after each page it writes; an error from f stops the run there.
func SetRollupFault(r *Roller, f func() error) { r.fault = f }
