// Package config loads pvebill's YAML configuration file and applies PVEBILL_* environment
// overrides. A config error names the key it is about.
package config
