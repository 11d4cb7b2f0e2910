import { SANDBOX_SCRIPT_PATH } from '../../domain/sandbox-policy.ts';

/** Escapes text for a double-quoted HTML attribute value. */
export function escapeAttribute(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

/**
 * The sandbox proxy page. It carries no artifact data: only the parent origin it answers to and the
 * inner document's CSP, both as escaped attributes that the proxy script reads. The app's HTML
 * arrives later by postMessage.
 */
export function proxyPage(parentOrigin: string, innerCsp: string): string {
  return `<!DOCTYPE html>
<html lang="en" data-parent-origin="${escapeAttribute(parentOrigin)}" data-inner-csp="${escapeAttribute(innerCsp)}">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<title>MCP app sandbox</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{display:block;border:0;width:100%;height:100%}</style>
<script src="${SANDBOX_SCRIPT_PATH}" defer></script>
</head>
<body></body>
</html>
`;
}
