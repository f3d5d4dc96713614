package plans

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// ParseYAML reads a YAML list of plan objects (the plans_file format: the same objects and keys
// as the API). Unknown keys are errors, as unknown JSON fields are in the API: a typo such as
// swap_mb must never be silently ignored. An empty document is an empty list.
func ParseYAML(raw []byte) ([]Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var specs []Spec
	if err := dec.Decode(&specs); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	return specs, nil
}

// ReadFile reads and parses a plans file.
func ReadFile(path string) ([]Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plans_file: %w", err)
	}
	specs, err := ParseYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("plans_file %s: %w", path, err)
	}
	return specs, nil
}

//go:embed examples.yaml
var examplesYAML []byte

// Examples returns the example plans of the embedded default (`pvebill serve` without a
// config): a container plan, a VM plan and one offering both, on the built-in simulator's demo
// cluster "default".
func Examples() []Spec {
	specs, err := ParseYAML(examplesYAML)
	if err != nil {
		panic("plans: examples.yaml: " + err.Error())
	}
	return specs
}
