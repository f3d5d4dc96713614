// Package i18n holds the stable error codes, the typed Problem error and the message catalogs
// for the nine languages pvebill answers in (en, de, es, fr, it, nl, pl, pt, tr).
//
// It imports nothing of pvebill, so that every layer may return its codes; it holds no rule
// about when a code applies, and translated text is for answers, never for logs.
package i18n
