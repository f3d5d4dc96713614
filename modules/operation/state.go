package operation

import (
	"context"
	"log/slog"
	"time"

	"pvebill/models"
)

// SetState records a service state after an operation, outside the operation's context (which
// may be cancelled by then); a failure is logged.
func SetState(db *models.DB, log *slog.Logger, k models.ServiceKey, state string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.UpdateService(ctx, k, map[string]any{"state": state}); err != nil {
		log.Error("record service state", "client_id", k.ClientID, "service_id", k.ServiceID, "state", state, "err", err)
	}
}
