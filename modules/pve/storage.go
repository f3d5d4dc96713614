package pve

import (
	"context"
	"net/http"
)

// StorageConfig is a storage.cfg entry as GET /storage/{storage} answers it.
type StorageConfig struct {
	Storage string `json:"storage"`
	// Type is the storage plugin: dir, lvmthin, lvm, zfspool, rbd, nfs, cifs, btrfs …
	Type    string `json:"type"`
	Content string `json:"content,omitempty"`
	Shared  Bool   `json:"shared,omitempty"`
}

// StorageConfig reads one storage's cluster-wide definition.
func (c *Client) StorageConfig(ctx context.Context, id string) (StorageConfig, error) {
	if err := checkIdent("storage", id); err != nil {
		return StorageConfig{}, err
	}
	var out StorageConfig
	err := c.DoRequest(ctx, http.MethodGet, "/storage/"+id, nil, &out)
	return out, err
}
