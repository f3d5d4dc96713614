// Package console is the customer's browser console (R41): one-time console tokens, the page
// that carries xterm.js (a container's terminal) or noVNC (a VM's screen) with every asset
// embedded in the binary, and the relay between the browser's WebSocket and the guest's console
// session at Proxmox, which the guest kinds open (kinds.Consoler). The browser never sees a
// Proxmox ticket: it holds a pvebill URL that works once, for one service, within 60 s.
package console
