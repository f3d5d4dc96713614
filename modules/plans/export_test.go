package plans

// UnregisterKind removes the rules of a kind a test registered, so that other tests see only
// the built kinds.
func UnregisterKind(t GuestType) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	delete(rules, t)
}
