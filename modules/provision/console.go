package provision

import (
	"context"

	"pvebill/models"
	"pvebill/modules/console"
	"pvebill/modules/operation"
)

// ConsoleKinds implements console.Opener: no guest kind opens a console yet.
func (s *Provisioner) ConsoleKinds(string) []console.Kind { return nil }

// ConsoleReady implements console.Opener.
func (s *Provisioner) ConsoleReady(context.Context, *models.Service) error {
	return operation.NotAvailable()
}

// OpenConsole implements console.Opener.
func (s *Provisioner) OpenConsole(context.Context, *models.Service, console.Kind) (console.Upstream, error) {
	return console.Upstream{}, operation.NotAvailable()
}
