/*
 * The MCP Apps sandbox proxy (extension io.modelcontextprotocol/ui, spec version 2026-01-26).
 *
 * Runs on the isolated sandbox origin inside the console's frame. It tells the console it is ready,
 * takes the app's HTML from the console (and from nowhere else), runs it in an inner frame that
 * has an opaque origin and scripts only, under the inner CSP the server wrote into this page, and
 * then relays JSON-RPC messages both ways unchanged, except the proxy's own `sandbox-` messages.
 */
(function () {
  'use strict';

  var PREFIX = 'ui/notifications/sandbox-';
  var root = document.documentElement;
  // Written by the server, escaped; `document.referrer` is hidden by `Referrer-Policy: no-referrer`.
  var parentOrigin = root.getAttribute('data-parent-origin');
  var innerCsp = root.getAttribute('data-inner-csp');
  var parent = window.parent;
  if (!parentOrigin || innerCsp === null || parent === window) return;

  var inner = null;
  var innerLoaded = false;
  var waiting = [];

  function methodOf(data) {
    return data !== null && typeof data === 'object' && data.jsonrpc === '2.0' && typeof data.method === 'string'
      ? data.method
      : null;
  }

  function isProxyMessage(data) {
    var method = methodOf(data);
    return method !== null && method.indexOf(PREFIX) === 0;
  }

  /* The app's document with the inner CSP as the first child of its head, before anything it declares. */
  function innerDocument(html) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    var meta = doc.createElement('meta');
    meta.setAttribute('http-equiv', 'Content-Security-Policy');
    meta.setAttribute('content', innerCsp);
    doc.head.insertBefore(meta, doc.head.firstChild);
    return '<!DOCTYPE html>' + doc.documentElement.outerHTML;
  }

  function toInner(data) {
    if (innerLoaded) inner.contentWindow.postMessage(data, '*');
    else waiting.push(data);
  }

  /* Builds the inner frame once. Any `sandbox`, `csp` or `permissions` in the message is ignored:
     the frame gets scripts only and the server's CSP, never more. */
  function build(params) {
    if (inner !== null || params === null || typeof params !== 'object' || typeof params.html !== 'string') return;
    inner = document.createElement('iframe');
    inner.setAttribute('sandbox', 'allow-scripts');
    inner.setAttribute('title', 'MCP app');
    inner.addEventListener('load', function () {
      innerLoaded = true;
      var queued = waiting;
      waiting = [];
      for (var i = 0; i < queued.length; i++) inner.contentWindow.postMessage(queued[i], '*');
    });
    inner.srcdoc = innerDocument(params.html);
    document.body.appendChild(inner);
  }

  window.addEventListener('message', function (event) {
    var data = event.data;
    if (event.source === parent) {
      if (event.origin !== parentOrigin) return;
      if (methodOf(data) === PREFIX + 'resource-ready') build(data.params);
      else if (!isProxyMessage(data) && inner !== null) toInner(data);
      return;
    }
    // The inner frame's origin is opaque ("null"), so it is known by its window, never by origin.
    if (inner !== null && event.source === inner.contentWindow && !isProxyMessage(data)) {
      parent.postMessage(data, parentOrigin);
    }
  });

  parent.postMessage({ jsonrpc: '2.0', method: PREFIX + 'proxy-ready', params: {} }, parentOrigin);
})();
