// What the two console pages share: the WebSocket address of this page's token, and the status
// line, whose texts come translated from the page (data-* attributes of #console).
export const root = document.getElementById('console');
const status = document.getElementById('status');

export function socketURL() {
  const url = new URL(location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = url.pathname.replace(/\/+$/, '') + '/ws';
  url.search = '';
  url.hash = '';
  return url.href;
}

export function show(key) {
  status.textContent = root.dataset[key] || '';
  document.body.dataset.state = key;
}

// closed explains the end of a session by its WebSocket close code (modules/console/session.go).
export function closed(ev, opened) {
  if (!opened) {
    show('failed');
  } else if (ev.code === 4000) {
    show('maxSession');
  } else if (ev.code === 4001) {
    show('serviceChanged');
  } else {
    show('closed');
  }
}
