// A container's terminal: xterm.js over the console WebSocket, speaking Proxmox's termproxy
// framing (docs/proxmox.md §14): "0:<length>:<data>" for input, "1:<cols>:<rows>:" to resize,
// "2" as keep-alive. pvebill has already authenticated the session at Proxmox.
import { Terminal } from '../vendor/xterm/xterm.mjs';
import { FitAddon } from '../vendor/xterm/addon-fit.mjs';
import { root, socketURL, show, closed } from './common.js';

const term = new Terminal({ cursorBlink: true, fontSize: 15, scrollback: 2000 });
const fit = new FitAddon();
term.loadAddon(fit);
term.open(root);
fit.fit();
window.pvebillTerminal = term;

const enc = new TextEncoder();
const ws = new WebSocket(socketURL(), ['binary']);
ws.binaryType = 'arraybuffer';
let opened = false;
let keepalive = 0;

function frame(text, data) {
  const head = enc.encode(text);
  const out = new Uint8Array(head.length + (data ? data.length : 0));
  out.set(head, 0);
  if (data) {
    out.set(data, head.length);
  }
  return out;
}

function resize() {
  if (ws.readyState === WebSocket.OPEN) {
    ws.send(frame('1:' + term.cols + ':' + term.rows + ':'));
  }
}

ws.addEventListener('open', () => {
  opened = true;
  show('connected');
  resize();
  term.focus();
  keepalive = setInterval(() => ws.send(frame('2')), 30000);
});
ws.addEventListener('message', (ev) => term.write(new Uint8Array(ev.data)));
ws.addEventListener('close', (ev) => {
  clearInterval(keepalive);
  closed(ev, opened);
});
term.onData((d) => {
  if (ws.readyState === WebSocket.OPEN) {
    const data = enc.encode(d);
    ws.send(frame('0:' + data.length + ':', data));
  }
});
term.onResize(resize);
window.addEventListener('resize', () => fit.fit());
