// The default error page: status, reason phrase, a sentence on what it means, and on a 500 the
// administrator's contact when `serverAdministratorEmail` is set (only there, as in Ferron:
// REFERENCE-behaviour.md §9; a 404 or 403 is no reason to write to the administrator). Self-contained HTML (no external
// resources), readable in light and dark mode and on a phone.
import { STATUS_CODES } from 'node:http';
import { escapeHtml, htmlPage } from '../http/html.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'The server could not understand the request. Check the address and try again.',
  401: 'You need to sign in to see this page.',
  403: 'You do not have permission to see this page.',
  404: 'The page you asked for was not found. Check the address for typing mistakes.',
  405: 'This kind of request is not allowed for this address.',
  406: 'The server cannot produce a response in a form your browser accepts.',
  408: 'The server gave up waiting for the request.',
  410: 'The page you asked for is gone and will not come back.',
  411: 'The request needs a Content-Length.',
  412: 'A condition of the request was not met.',
  413: 'The request is larger than the server accepts.',
  414: 'The address is longer than the server accepts.',
  415: 'The server does not support the type of content sent.',
  416: 'The requested range cannot be served.',
  418: "I'm a teapot.",
  429: 'Too many requests. Wait a moment and try again.',
  431: 'The request headers are larger than the server accepts.',
  500: 'The server ran into an unexpected problem and could not complete the request.',
  501: 'The server does not support what the request asks for.',
  502: 'The server received an invalid response from the service behind it.',
  503: 'The service is unavailable right now. Try again in a moment.',
  504: 'The service behind the server did not answer in time.',
  505: 'The server does not support the HTTP version used.',
};

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? '';
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d2433; --muted: #5b6478; --bg: #f6f7fb; --card: #fff; --accent: #3d5afe; }
@media (prefers-color-scheme: dark) { :root { --fg: #e7eaf3; --muted: #a3abc0; --bg: #11141c; --card: #1a1f2b; --accent: #8c9eff; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; padding: 1.5rem; }
main { max-width: 34rem; width: 100%; background: var(--card); border-radius: 14px; padding: 2.25rem 2rem;
  box-shadow: 0 1px 2px rgba(0,0,0,.06), 0 8px 28px rgba(0,0,0,.08); }
.code { font-size: 3.5rem; font-weight: 750; letter-spacing: -.03em; line-height: 1; color: var(--accent); margin: 0; }
h1 { font-size: 1.35rem; margin: .6rem 0 .4rem; }
p { margin: .4rem 0; color: var(--muted); }
a { color: var(--accent); }
footer { margin-top: 1.6rem; font-size: .8rem; color: var(--muted); border-top: 1px solid rgba(127,127,127,.2); padding-top: .8rem; }
`;

function renderErrorPage(status: number, adminEmail: string | undefined): string {
  const title = `${status} ${reasonPhrase(status)}`.trim();
  const description = escapeHtml(
    DESCRIPTIONS[status] ??
      (status >= 500 ? DESCRIPTIONS[500]! : 'The request could not be completed.'),
  );
  const contact =
    status === 500 && adminEmail
      ? `<p class="contact">If the problem persists, contact the administrator at <a href="mailto:${escapeHtml(adminEmail)}">${escapeHtml(adminEmail)}</a>.</p>`
      : '';
  return htmlPage(
    title,
    STYLE,
    `<main>
<p class="code">${status}</p>
<h1>${escapeHtml(title)}</h1>
<p>${description}</p>
${contact}
<footer>Portico</footer>
</main>`,
  );
}

// Pages depend on the status and the administrator's address alone: each is rendered once, kept
// by status (a number: no key string made and hashed per error). Only a 500 names the
// administrator, by address; that bound only matters if addresses came and went over many reloads.
const rendered = new Map<number, Buffer>();
const rendered500 = new Map<string, Buffer>();
const MAX_RENDERED = 1024;

/** The default page for `status`, as the bytes sent. */
export function errorPageBody(status: number, adminEmail: string | undefined): Buffer {
  if (status === 500) {
    const key = adminEmail ?? '';
    let body = rendered500.get(key);
    if (body === undefined) {
      if (rendered500.size >= MAX_RENDERED) rendered500.clear();
      body = Buffer.from(renderErrorPage(status, adminEmail));
      rendered500.set(key, body);
    }
    return body;
  }
  let body = rendered.get(status);
  if (body === undefined) {
    body = Buffer.from(renderErrorPage(status, adminEmail));
    rendered.set(status, body);
  }
  return body;
}
