/** The console page's HTML, CSP and stylesheet (server side; the script is `main.tsx`, bundled). */
import { escapeAttribute } from '../sandbox/proxy-page.ts';

export const CONSOLE_SCRIPT_PATH = '/assets/console.js';
export const CONSOLE_STYLE_PATH = '/assets/console.css';

/**
 * The page: no inline script or style; in demo mode only, the demo token the sign-in form offers; when an
 * identity provider is configured, the name its sign-in button shows (OIDC_NAME).
 */
export function consolePage(demoToken: string | null, oidcName: string | null): string {
  const demo = demoToken === null ? '' : ` data-demo-token="${escapeAttribute(demoToken)}"`;
  const oidc = oidcName === null ? '' : ` data-oidc-name="${escapeAttribute(oidcName)}"`;
  return `<!DOCTYPE html>
<html lang="en"${demo}${oidc}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Agent console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${CONSOLE_STYLE_PATH}">
<script src="${CONSOLE_SCRIPT_PATH}" defer></script>
</head>
<body>
<div id="console"><p class="loading">Loading…</p></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;
}

export const CONSOLE_CSS = `:root{--bg:#f4f7fb;--panel:#fff;--fg:#1b2430;--muted:#5b6776;--line:#d5dce5;--accent:#1f5fbf;--danger:#a4262c;--ok:#1e7b3a}
@media (prefers-color-scheme:dark){:root{--bg:#0f1318;--panel:#161b22;--fg:#e9eef4;--muted:#9aa5b2;--line:#2c343e;--accent:#8ab4f8;--danger:#f28b8f;--ok:#81c995}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
button,select,input,textarea{font:inherit;color:inherit}
button{padding:6px 12px;border:1px solid var(--line);border-radius:6px;background:var(--panel);cursor:pointer}
button:disabled{opacity:.55;cursor:default}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
select,input,textarea{padding:6px 8px;border:1px solid var(--line);border-radius:6px;background:var(--panel);width:100%}
label{display:block;font-weight:600;margin:8px 0 4px}
.error{color:var(--danger)}
.error:empty{display:none}
.loading{padding:24px;color:var(--muted)}
.sign-in{max-width:420px;margin:10vh auto;padding:24px;background:var(--panel);border:1px solid var(--line);border-radius:10px}
.sign-in button{margin-top:12px}
.oidc-sign-in{display:block;padding:10px 12px;border-radius:6px;background:var(--accent);color:var(--panel);font-weight:600;text-align:center;text-decoration:none}
.oidc-sign-in:hover{filter:brightness(1.08)}
.sign-in .or{margin:16px 0 0;color:var(--muted);font-size:13px;text-align:center}
.hint{color:var(--muted);font-size:13px}
.layout{display:grid;grid-template-columns:280px 1fr;grid-template-rows:auto 1fr;min-height:100vh}
.top{grid-column:1/-1;display:flex;align-items:center;gap:12px;padding:8px 16px;border-bottom:1px solid var(--line);background:var(--panel)}
.top h1{font-size:17px;margin:0;flex:1}
.who{color:var(--muted)}
.top a{color:var(--accent)}
.chat-links{max-width:640px}
.chat-links .links{list-style:none;padding:0}
.chat-links .links li{display:flex;gap:8px;align-items:center;padding:6px 0;border-bottom:1px solid var(--line)}
.chat-links .channel{font-weight:600}
.chat-links .address{flex:1;font-family:ui-monospace,monospace}
.chat-links form{display:flex;gap:8px;align-items:flex-end;flex-wrap:wrap;margin-top:12px}
.chat-links form label{width:100%;margin-bottom:0}
.chat-links form select{width:auto}
.link-code{margin-top:12px;padding:8px 12px;border:1px solid var(--accent);border-radius:8px;background:var(--panel)}
.link-code code{font-size:20px;letter-spacing:.08em}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
button.danger{border-color:var(--danger);color:var(--danger)}
.access-tokens,.admin-users{max-width:960px}
.access-tokens h3,.admin-users h3{font-size:15px;margin:16px 0 4px}
.data-table{width:100%;border-collapse:collapse;background:var(--panel);border:1px solid var(--line);border-radius:8px}
.data-table th,.data-table td{padding:6px 8px;text-align:left;vertical-align:middle;border-bottom:1px solid var(--line)}
.data-table th{font-size:13px;color:var(--muted);font-weight:600}
.data-table tbody tr:last-child td{border-bottom:0}
.data-table td.name,.data-table td.email{overflow-wrap:anywhere}
.data-table .row-actions{text-align:right;white-space:nowrap}
.data-table .row-actions button+button{margin-left:6px}
.data-table tr[data-active=false] td{color:var(--muted)}
.data-table .inactive,.data-table .expired{color:var(--danger)}
.confirm{display:inline-flex;gap:6px;align-items:center}
.fields{display:flex;gap:8px;align-items:flex-end;flex-wrap:wrap}
.fields>div{flex:1;min-width:180px}
.fields label{margin-top:0}
.new-token{margin:12px 0;padding:8px 12px;border:1px solid var(--accent);border-radius:8px;background:var(--panel)}
.new-token p{margin:4px 0}
.new-token code.secret{display:block;padding:6px 8px;border-radius:6px;background:var(--bg);font:14px ui-monospace,monospace;word-break:break-all;user-select:all}
.admin-users .more{margin-top:8px}
.automation{max-width:1100px}
.automation-section{margin-top:20px}
.automation-section h3{font-size:17px;margin:0 0 4px}
.automation-section h4{font-size:15px;margin:16px 0 4px}
.automation-section td.text,.automation-section td.url{overflow-wrap:anywhere}
.automation-section td.cron{white-space:nowrap}
.automation-section .row-actions .error{display:block;white-space:normal}
.automation-form .fields label{width:auto}
.automation-form .actions{display:flex;gap:8px;align-items:center;margin-top:8px}
.data-table tr[data-enabled=false] td.state{color:var(--muted)}
.new-webhook-form label[for=webhook-url]{flex:1;min-width:320px}
.webhook-events{border:0;padding:0;margin:8px 0 0}
.webhook-events legend{font-weight:600;padding:0}
.webhook-events label{display:inline-flex;gap:6px;align-items:center;margin:4px 16px 0 0;font-weight:400}
.webhook-events input{width:auto}
.automation-section .deliveries-row>td{background:var(--bg)}
.webhook-deliveries .refresh{margin-top:6px}
.webhook-deliveries td.last{overflow-wrap:anywhere}
.origin{margin-left:8px;font-size:12px;color:var(--accent)}
.origin code{font-size:11px}
.threads{border-right:1px solid var(--line);padding:12px;overflow:auto}
.threads ul{list-style:none;margin:8px 0;padding:0}
.threads li a{display:block;padding:8px;border-radius:6px;color:inherit;text-decoration:none}
.threads li a[aria-current=page]{background:var(--panel);border:1px solid var(--line)}
.threads .title{display:block;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.threads .meta{display:block;color:var(--muted);font-size:13px}
.threads .activity{display:block;font-size:12px;color:var(--accent)}
.threads .new{display:inline-block;font-weight:600;color:var(--accent)}
.threads .search{display:block;width:100%;margin:8px 0 4px}
.threads label.archived{display:block;font-size:13px;color:var(--muted)}
.threads li{position:relative}
.threads .manage{display:flex;gap:6px;padding:0 8px 6px}
.threads .manage button{font-size:12px;padding:1px 6px}
.threads input.rename{display:block;width:100%;font-weight:600}
main{padding:16px;overflow:auto;min-width:0}
.thread>header{display:flex;flex-wrap:wrap;gap:12px;justify-content:space-between;align-items:flex-start}
.thread h2{margin:0;font-size:19px}
.meta{color:var(--muted);margin:2px 0}
.controls{display:flex;gap:8px;align-items:flex-end}
.controls label{margin:0;font-weight:400}
.ledger{list-style:none;padding:0;margin:12px 0;display:flex;flex-direction:column;gap:8px}
.ledger>li[data-message-id]{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.ledger>li[data-message-id] p{margin:2px 0;white-space:pre-wrap;word-break:break-word}
.ledger>li[data-role=user]{border-left:3px solid var(--accent)}
.markdown{overflow-wrap:anywhere}
.ledger>li[data-message-id] .markdown p{white-space:normal;margin:6px 0}
.markdown pre{margin:6px 0;padding:8px;border-radius:6px;overflow:auto;font:13px/1.45 ui-monospace,monospace;background:var(--bg)}
.markdown code{font:13px ui-monospace,monospace;padding:0 3px;border-radius:4px;background:var(--bg)}
.markdown pre code{padding:0;background:none}
.markdown table{border-collapse:collapse;margin:6px 0;display:block;overflow:auto}
.markdown th,.markdown td{border:1px solid var(--line);padding:3px 8px;text-align:left}
.markdown a{color:var(--accent)}
.markdown blockquote{margin:6px 0;padding-left:10px;border-left:3px solid var(--line);color:var(--muted)}
.hljs-keyword,.hljs-selector-tag,.hljs-literal,.hljs-built_in{color:#a626a4}
.hljs-string,.hljs-attr,.hljs-addition,.hljs-regexp{color:#50a14f}
.hljs-number,.hljs-symbol{color:#986801}
.hljs-comment,.hljs-quote{color:var(--muted);font-style:italic}
.hljs-title,.hljs-section,.hljs-name,.hljs-type{color:#4078f2}
.hljs-deletion,.hljs-meta{color:#e45649}
@media (prefers-color-scheme:dark){.hljs-keyword,.hljs-selector-tag,.hljs-literal,.hljs-built_in{color:#c678dd}.hljs-string,.hljs-attr,.hljs-addition,.hljs-regexp{color:#98c379}.hljs-number,.hljs-symbol{color:#d19a66}.hljs-title,.hljs-section,.hljs-name,.hljs-type{color:#61afef}.hljs-deletion,.hljs-meta{color:#e06c75}}
.ledger>li.run-entry>.run{margin:0}
.role{font-size:12px;color:var(--muted);text-transform:uppercase}
.run,.pending{background:var(--panel);border:1px dashed var(--line);border-radius:8px;padding:8px 12px;margin:8px 0}
.run[data-status=running]{border-style:solid;border-color:var(--accent)}
.run[data-rewound=true]{opacity:.6}
.run .rewound-label{margin-left:8px;padding:0 6px;border:1px solid var(--line);border-radius:6px;font-size:12px;text-transform:uppercase;color:var(--muted)}
.run .rewind{float:right;display:inline-flex;gap:6px;align-items:center;flex-wrap:wrap}
.run .rewind button{font-size:12px;padding:1px 6px}
.run .rewind .error{color:var(--danger);font-size:13px}
.run .stream{white-space:pre-wrap;margin:4px 0}
.tool-call{border-top:1px solid var(--line);padding-top:4px;margin-top:4px}
.tool-call .kind{font-size:12px;text-transform:uppercase;color:var(--muted)}
.tool-call .status{font-size:12px;color:var(--muted)}
.diff pre,.output{margin:4px 0;padding:6px;border-radius:6px;overflow:auto;font:12px/1.4 ui-monospace,monospace;background:var(--bg)}
.diff pre{white-space:pre-wrap;overflow-wrap:anywhere}
.diff .old{border-left:3px solid var(--danger)}
.diff .new{border-left:3px solid var(--ok)}
.diff figcaption{font:12px ui-monospace,monospace;color:var(--muted)}
.pending{border-style:solid;border-color:var(--danger)}
.pending h3{margin:0 0 6px;font-size:15px}
.options{display:flex;gap:8px;flex-wrap:wrap;margin-top:6px}
.note{color:var(--muted);font-style:italic}
.moved{background:var(--panel);border:1px solid var(--accent);border-radius:8px;padding:8px 12px}
.lineage{color:var(--muted);margin:4px 0}
.ledger button.fork{float:right;font-size:12px;padding:1px 6px}
.note:empty{display:none}
.moves{margin-top:12px;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.moves summary{cursor:pointer;font-weight:600}
.moves h3{font-size:15px;margin:12px 0 4px}
.places{list-style:none;padding:0;margin:6px 0}
.places li{display:flex;flex-wrap:wrap;gap:8px;align-items:center;padding:4px 0;border-bottom:1px solid var(--line)}
.places li label{display:inline;font-weight:400;margin:0}
.places li input{width:auto}
.places li[aria-disabled=true]{color:var(--muted)}
.barred{font-size:12px;color:var(--danger)}
.crumbs{display:flex;gap:4px;flex-wrap:wrap}
.warning{color:var(--danger);font-weight:600}
label.inline{font-weight:400}
label.inline input{width:auto}
.app-ref{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.inline-app{margin:8px 0 0;border:1px solid var(--line);border-radius:8px;padding:6px}
.inline-app figcaption{display:flex;justify-content:space-between;align-items:center;gap:8px;font-weight:600}
.inline-app .app-frame iframe{display:block;width:100%;height:320px;border:0;background:transparent}
.inline-app[data-display=fullscreen] .app-frame iframe{position:fixed;inset:0;width:100vw;height:100vh!important;min-width:0!important;z-index:10;background:var(--bg)}
.inline-app .exit-full{position:fixed;top:8px;right:8px;z-index:11}
.app-log ol{margin:6px 0 0;padding:0;list-style:none;max-height:200px;overflow:auto;font:12px/1.5 ui-monospace,monospace}
.app-log li{white-space:pre-wrap;word-break:break-word}
.app-log .level{font-weight:600;text-transform:uppercase}
[hidden]{display:none!important}
.composer{margin-top:12px}
.composer button{margin-top:8px}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.composer .actions .hint{margin-top:8px}
.queue{margin:8px 0}
.queue h3{font-size:14px;margin:0 0 4px;color:var(--muted)}
.queue ol{list-style:none;padding:0;margin:0;display:flex;flex-direction:column;gap:6px}
.queue li{background:var(--panel);border:1px dashed var(--accent);border-radius:8px;padding:8px 12px}
.queue li p{margin:2px 0;white-space:pre-wrap;word-break:break-word}
.queue li button{margin-top:4px}
.changes{margin:12px 0;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.changes>header{display:flex;flex-wrap:wrap;gap:12px;align-items:center}
.changes h3{margin:0;font-size:15px}
.changes h4{margin:12px 0 4px;font-size:14px}
.changes .files{list-style:none;padding:0;margin:8px 0}
.changes .files button{display:flex;gap:8px;width:100%;text-align:left;border:0;border-bottom:1px solid var(--line);border-radius:0;background:transparent}
.changes .files button[aria-current=true]{background:var(--bg)}
.changes .files .path{flex:1;font-family:ui-monospace,monospace;word-break:break-all}
.changes .status{font-size:12px;text-transform:uppercase;color:var(--muted);min-width:70px}
.changes .added{color:var(--ok)}
.changes .deleted{color:var(--danger)}
.file-diff{margin:8px 0;overflow:auto}
.file-diff figcaption{font:12px ui-monospace,monospace;color:var(--muted)}
.file-diff table{border-collapse:collapse;width:100%;font:12px/1.5 ui-monospace,monospace}
.file-diff td{padding:0 6px;vertical-align:top}
.file-diff td.num{width:1%;text-align:right;color:var(--muted);user-select:none}
.file-diff td.code{white-space:pre-wrap;word-break:break-all}
.file-diff .sign{display:inline-block;width:1.2em;color:var(--muted)}
.file-diff tr.added td.code{background:rgba(30,123,58,.14)}
.file-diff tr.deleted td.code{background:rgba(164,38,44,.14)}
.file-diff tr.hunk td,.file-diff tr.note td{color:var(--muted);background:var(--bg)}
.file-diff .line-comment{padding:0 4px;border:0;background:transparent;color:var(--accent);font:inherit}
.file-diff .line-comment[aria-pressed=true]{outline:1px solid var(--accent)}
.file-diff .comment-row td{padding:4px 6px;font:14px/1.45 system-ui,sans-serif}
.file-diff .comment{margin:0;padding:6px 8px;border-left:3px solid var(--accent);background:var(--bg);white-space:pre-wrap}
.file-diff .comment .role{display:block}
.review ol{margin:4px 0;padding-left:20px}
.review .where{font-family:ui-monospace,monospace}
.review>button,.merge>button,.review>.actions,.merge>.actions{margin-top:8px}
.actions>.error{font-size:14px}
.changes .uncommitted{color:var(--fg)}
.merge select{width:auto;margin-left:8px}
.conflicts ul{margin:4px 0;font-family:ui-monospace,monospace}
.done{color:var(--ok)}
.pickers{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:8px}
@media (max-width:720px){.layout{grid-template-columns:1fr}.threads{border-right:0;border-bottom:1px solid var(--line);max-height:35vh}}
`;
