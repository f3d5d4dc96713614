// Package data is read: only bin/ and data/ at the root are skipped (R93).
package data
