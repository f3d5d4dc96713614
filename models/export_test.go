package models

// SplitSQLForTest exposes splitSQL to the external tests.
var SplitSQLForTest = splitSQL
