package pve

import (
	"context"
	"net/http"
)

// StorageConfig reads one storage's cluster-wide definition.
func (c *Client) StorageConfig(ctx context.Context, id string) (StorageConfig, error) {
	if err := checkIdent("storage", id); err != nil {
		return StorageConfig{}, err
	}
	var out StorageConfig
	err := c.DoRequest(ctx, http.MethodGet, "/storage/"+id, nil, &out)
	return out, err
}
