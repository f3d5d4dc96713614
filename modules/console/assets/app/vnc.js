// A VM's screen: noVNC over the console WebSocket. pvebill has already passed Proxmox's VNC
// authentication with the ticket, which never reaches this page: the relay offers noVNC a
// session without a password.
import RFB from '../vendor/novnc/core/rfb.js';
import { root, socketURL, show, closed } from './common.js';

const ws = new WebSocket(socketURL(), ['binary']);
ws.binaryType = 'arraybuffer';
let opened = false;
ws.addEventListener('open', () => { opened = true; });
ws.addEventListener('close', (ev) => closed(ev, opened));

const rfb = new RFB(root, ws);
rfb.scaleViewport = true;
rfb.background = '#111';
rfb.addEventListener('connect', () => {
  show('connected');
  rfb.focus();
});
window.pvebillRFB = rfb;
