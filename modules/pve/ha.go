package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// HAType is the prefix of an HA resource id: the guest's type as HA names it.
type HAType string

// The HA resource types of guests.
const (
	HAContainer HAType = "ct"
	HAVM        HAType = "vm"
)

// HAResourceID is the HA resource id of a guest: "ct:<vmid>" for a container, "vm:<vmid>" for
// a VM.
func HAResourceID(t HAType, vmid int) string {
	return string(t) + ":" + strconv.Itoa(vmid)
}

// SetHAState changes an HA-managed guest's requested state ("started", "stopped"), so that HA
// neither restarts a suspended guest nor keeps an unsuspended one down (docs/proxmox.md §11.6).
func (cc *ClusterClient) SetHAState(ctx context.Context, sid, state string) error {
	if err := cc.c.DoRequest(ctx, http.MethodPut, "/cluster/ha/resources/"+sid, url.Values{"state": {state}}, nil); err != nil {
		return fmt.Errorf("set HA state of %s to %s: %w", sid, state, err)
	}
	return nil
}
