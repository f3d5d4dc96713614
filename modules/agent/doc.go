// Package agent is `pvebill agent` and pvebill's end of its tunnels (R57): the agent runs inside
// a Proxmox cluster's network, connects out to pvebill over a WebSocket, proves itself with an
// ed25519 key, and serves pvebill's Proxmox calls over HTTP/2 with the roles reversed, adding
// the credentials only it holds and refusing every call outside the client's route table.
package agent
