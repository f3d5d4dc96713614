// Package i18n holds the stable error codes, the typed Problem error and the message catalogs
// for the nine languages pvebill answers in (en, de, es, fr, it, nl, pl, pt, tr).
package i18n
